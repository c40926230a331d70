"""The local outbox: drafts, "sending" (stays on the device), listing."""

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.outbox import outbox_draft, outbox_list, outbox_send

from .conftest import call


def test_draft_then_send(ctx):
    draft = call(outbox_draft, ctx, to="ann@example.org", subject="Dinner", body="Friday at 8?")
    assert draft == {"id": "m1", "to": "ann@example.org", "subject": "Dinner", "status": "draft"}
    sent = call(outbox_send, ctx, message_id="m1")
    assert (sent["status"], sent["sent"]) == ("sent", "2026-11-30T08:00:00+00:00")
    with pytest.raises(ToolError, match="already sent"):
        call(outbox_send, ctx, message_id="m1")


def test_list_filters_by_status_newest_first(ctx):
    call(outbox_draft, ctx, to="A", body="one")
    call(outbox_draft, ctx, to="B", body="two " * 100)
    call(outbox_send, ctx, message_id="m1")
    assert [m["id"] for m in call(outbox_list, ctx)] == ["m2", "m1"]
    assert [m["id"] for m in call(outbox_list, ctx, status="draft")] == ["m2"]
    assert [m["id"] for m in call(outbox_list, ctx, status="sent")] == ["m1"]
    assert len(call(outbox_list, ctx, status="draft")[0]["preview"]) <= 121


def test_refusals(ctx):
    with pytest.raises(ToolError, match="recipient is empty"):
        call(outbox_draft, ctx, to=" ", body="hi")
    with pytest.raises(ToolError, match="message body is empty"):
        call(outbox_draft, ctx, to="A", body="")
    with pytest.raises(ToolError, match="no message with id 'm9'; outbox_list shows the ids"):
        call(outbox_send, ctx, message_id="m9")


def test_drafting_and_sending_are_side_effects():
    assert outbox_draft.side_effects and outbox_send.side_effects and not outbox_list.side_effects
