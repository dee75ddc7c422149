"""The one module that writes Server-Sent Events to the wire.

A stream first replays every persisted event after `Last-Event-ID`, then waits on the
conversation's channel-layer group. Group messages are only wake-ups: the stream reads
the events from the database by id, so nothing is lost when a wake-up is dropped, comes
late, or comes from another worker process.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.http import StreamingHttpResponse

from chat.core.realtime import conversation_group, register_stream_loop
from chat.core.selectors import event_list_after

logger = logging.getLogger(__name__)


def format_event(*, event_id: int | None, name: str, data: dict[str, Any]) -> bytes:
    """One SSE frame: `id`, `event`, and the JSON payload on a single `data` line."""
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append(f"event: {name}")
    lines.append("data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode()


def parse_last_event_id(value: str | None) -> int:
    try:
        return max(int((value or "0").strip()), 0)
    except ValueError:
        return 0


async def conversation_stream(
    *, conversation_id: int, last_event_id: int, keepalive: float | None = None
) -> AsyncIterator[bytes]:
    keepalive = keepalive or settings.SSE_KEEPALIVE_SECONDS
    register_stream_loop()
    layer = get_channel_layer()
    channel = await layer.new_channel()
    group = conversation_group(conversation_id)
    await layer.group_add(group, channel)
    cursor = last_event_id
    try:
        # Tell EventSource how long to wait before reconnecting, then catch up.
        yield b"retry: 1000\n: connected\n\n"
        while True:
            # database_sync_to_async closes the connection afterwards (streams are long-lived).
            events = await database_sync_to_async(event_list_after)(
                conversation_id=conversation_id, after_id=cursor
            )
            for event in events:
                cursor = event.id
                yield format_event(event_id=event.id, name=event.name, data=event.data)
            if len(events) == 500:
                continue  # more to replay
            # Wait for a wake-up about an event this stream hasn't sent yet; wake-ups for
            # events already read (several arrive per batch) cost no database query.
            try:
                while True:
                    wakeup = await asyncio.wait_for(layer.receive(channel), timeout=keepalive)
                    if int(wakeup.get("id", 0)) > cursor:
                        break
            except TimeoutError:
                yield b": keep-alive\n\n"
    finally:
        await layer.group_discard(group, channel)


def sse_response(*, conversation_id: int, last_event_id: int) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        conversation_stream(conversation_id=conversation_id, last_event_id=last_event_id),
        content_type="text/event-stream; charset=utf-8",
    )
    response["Cache-Control"] = "no-cache, no-transform"
    response["X-Accel-Buffering"] = "no"
    return response
