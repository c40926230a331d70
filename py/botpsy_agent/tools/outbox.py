"""A local message outbox: draft, "send" (moves the draft to sent; nothing leaves the
device), list. Stored in "outbox". Sending is a side effect the user confirms."""

from __future__ import annotations

from typing import Literal

from botpsy_agent.tooling import ToolContext, ToolError, tool

from .records import get_record, next_id, require_text, shorten, timestamp

COLLECTION = "outbox"
MAX_BODY_CHARS = 20_000


@tool(side_effects=True)
async def outbox_draft(ctx: ToolContext, to: str, body: str, subject: str = "") -> dict:
    """Write a message draft into the local outbox (it is not sent yet).

    Args:
        to: Recipient: a name, e-mail address or phone number.
        body: The message text.
        subject: Subject line, if any.
    """
    recipient = require_text(to, "recipient", 300)
    text = require_text(body, "message body", MAX_BODY_CHARS)
    message_id = await next_id(ctx.store, COLLECTION, "m")
    message = {"id": message_id, "to": recipient, "subject": subject.strip(), "body": text,
               "status": "draft", "created": timestamp(ctx), "sent": None}
    await ctx.store.put(COLLECTION, message_id, message)
    return {"id": message_id, "to": recipient, "subject": message["subject"], "status": "draft"}


@tool(side_effects=True)
async def outbox_send(ctx: ToolContext, message_id: str) -> dict:
    """Send a drafted message (to the local outbox's sent folder; nothing leaves the device).

    Args:
        message_id: The draft's id, as outbox_draft or outbox_list show it (e.g. "m2").
    """
    message = await get_record(ctx.store, COLLECTION, message_id, "message", "outbox_list")
    if message["status"] == "sent":
        raise ToolError(f"message {message['id']} was already sent at {message['sent']}")
    message.update(status="sent", sent=timestamp(ctx))
    await ctx.store.put(COLLECTION, message["id"], message)
    return {"id": message["id"], "to": message["to"], "status": "sent", "sent": message["sent"]}


@tool
async def outbox_list(ctx: ToolContext, status: Literal["draft", "sent", "all"] = "all") -> list[dict]:
    """List messages in the outbox, newest first.

    Args:
        status: "draft", "sent" or "all".
    """
    messages = [message for _, message in await ctx.store.items(COLLECTION)]
    if status != "all":
        messages = [message for message in messages if message["status"] == status]
    messages.sort(key=lambda message: int(message["id"].lstrip("m") or 0), reverse=True)
    return [{"id": message["id"], "to": message["to"], "subject": message["subject"], "status": message["status"],
             "preview": shorten(message["body"], 120), "created": message["created"], "sent": message["sent"]}
            for message in messages]
