"""Wake-ups over the channel layer, safe to send from any thread.

The in-memory layer's queues belong to the event loop the SSE streams wait in; a
`group_send` made on another loop (an agent thread's) would not wake them. So the loop
that serves streams registers itself, and sends from other threads are handed to it.
With Redis the hand-off is harmless.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)
_stream_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def conversation_group(conversation_id: int) -> str:
    """The channel-layer group of a conversation: each process with open streams of it
    has one member (its fan-out, `chat.edge.fanout`)."""
    return f"conversation-{conversation_id}"


def register_stream_loop() -> None:
    """Called by the stream fan-out (inside the server's event loop) when it starts."""
    global _stream_loop
    loop = asyncio.get_running_loop()
    with _lock:
        _stream_loop = loop


def wake(conversation_id: int, event_id: int) -> None:
    """Tell the conversation's open streams that event `event_id` was committed."""
    layer = get_channel_layer()
    if layer is None:
        return
    # The conversation id lets a process route the wake-up to its one feed of it.
    message = {"type": "event.wakeup", "conversation": conversation_id, "id": event_id}
    group = conversation_group(conversation_id)
    loop = _stream_loop
    try:
        if loop is not None and loop.is_running() and not loop.is_closed():
            future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
            future.result(timeout=5)
        else:
            async_to_sync(layer.group_send)(group, message)
    except Exception:  # a broken layer must not fail a write that already committed
        logger.exception("channel layer wake-up failed for conversation %s", conversation_id)
