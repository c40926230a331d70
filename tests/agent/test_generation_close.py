"""A generation Python leaves before its end is closed on the page too, so the model
stops instead of running on to max_tokens (the host's generate_close)."""

import asyncio
import json

from botpsy_agent import agent as agent_module
from botpsy_agent.bridge import BridgeModel

from .test_bridge import FakeHost, session_for


def test_a_stream_left_early_closes_its_generation_on_the_host():
    host = FakeHost(["a long answer that goes on"])

    async def read_one_chunk():
        stream = BridgeModel(host).generate("prompt", {})
        first = await stream.__anext__()
        await stream.aclose()
        return first

    assert asyncio.run(read_one_chunk()) == "a l"
    assert host.closed == [1]


def test_a_stream_read_to_its_end_is_not_closed_again():
    host = FakeHost(["short"])

    async def read_all():
        return [chunk async for chunk in BridgeModel(host).generate("prompt", {})]

    assert "".join(asyncio.run(read_all())) == "short"
    assert host.closed == []


def test_an_error_while_handling_model_output_ends_the_turn_and_closes_the_generation(monkeypatch):
    original_feed = agent_module.ModelOutputParser.feed

    def feed_failing_on_marker(parser, chunk):
        if "!" in chunk:
            raise ValueError("parser broke on a chunk")
        return original_feed(parser, chunk)

    monkeypatch.setattr(agent_module.ModelOutputParser, "feed", feed_failing_on_marker)
    host = FakeHost(["fine so far !then much more text that must not be generated"])
    closed_when_the_error_was_shown = []
    emit = host.emit

    def emit_noting_closes(event_json):
        if json.loads(event_json)["type"] == "error":
            closed_when_the_error_was_shown.extend(host.closed)
        emit(event_json)

    host.emit = emit_noting_closes
    session = session_for(host)
    asyncio.run(session.run_turn("hello"))
    errors = [event["message"] for event in host.events if event["type"] == "error"]
    assert errors == ["Error: ValueError: parser broke on a chunk"], host.events
    # Closed at once, not later when the event loop shuts its leftover generators down.
    assert closed_when_the_error_was_shown == [1], "the page-side generation was left running"
