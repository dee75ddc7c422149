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


# A wake-up is a hint (streams also check the database every SSE_CATCHUP_SECONDS): it
# never holds up the request or the turn that committed the event for longer than this.
WAKE_TIMEOUT = 1.0


def wake(conversation_id: int, event_id: int) -> None:
    """Tell the conversation's open streams that event `event_id` was committed.

    In a process that serves streams the send is handed to their event loop and not
    waited for; elsewhere (an agent worker) it waits at most WAKE_TIMEOUT. A layer that
    is down (Redis restarting) costs a log line, never the caller's time or its write."""
    layer = get_channel_layer()
    if layer is None:
        return
    # The conversation id lets a process route the wake-up to its one feed of it.
    message = {"type": "event.wakeup", "conversation": conversation_id, "id": event_id}
    group = conversation_group(conversation_id)

    async def send() -> None:
        try:
            await asyncio.wait_for(layer.group_send(group, message), WAKE_TIMEOUT)
        except Exception as exc:
            logger.warning(
                "channel layer wake-up failed for conversation %s: %s: %s",
                conversation_id,
                type(exc).__name__,
                exc,
            )

    loop = _stream_loop
    try:
        if loop is not None and loop.is_running() and not loop.is_closed():
            asyncio.run_coroutine_threadsafe(send(), loop)
        else:
            async_to_sync(send)()
    except Exception:  # a broken layer must not fail a write that already committed
        logger.warning("channel layer wake-up failed for conversation %s", conversation_id)
