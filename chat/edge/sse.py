"""The one module that writes Server-Sent Events to the wire.

A stream first replays every persisted event after `Last-Event-ID` from the database,
then receives live frames from this process's fan-out (`chat.edge.fanout`): one channel-layer
subscription and one database read per conversation per process, however many streams
are open. Group messages are only wake-ups and events are rows, so nothing is lost when a
wake-up is dropped, comes late, or comes from another worker process.

Reconnect storms: `retry:` is jittered, so dropped clients come back spread out, and at
SSE_MAX_STREAMS a process refuses new streams at once with 503 + a jittered
`Retry-After` instead of letting them queue and time out.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping

from asgiref.sync import SyncToAsync
from django.conf import settings
from django.http import StreamingHttpResponse
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.edge import fanout
from chat.edge.stream_selectors import EventRow, Refusal, event_rows_after

logger = logging.getLogger(__name__)


def format_event(*, event_id: int | None, name: str, data: Mapping[str, object]) -> bytes:
    """One SSE frame: `id`, `event`, and the JSON payload on a single `data` line."""
    lines = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append(f"event: {name}")
    lines.append("data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode()


def _render(event: EventRow) -> bytes:
    return format_event(event_id=event.id, name=event.name, data=event.data)


def parse_last_event_id(value: str | None) -> int:
    try:
        return max(int((value or "0").strip()), 0)
    except ValueError:
        return 0


def retry_ms() -> int:
    """The reconnect delay a stream announces: SSE_RETRY_MS to three times that, at random."""
    base = settings.SSE_RETRY_MS
    return random.randint(base, 3 * base)  # noqa: S311 - jitter, not secrecy


class StreamRefused(Exception):
    """The access check said no: `code` is "unauthorized" or "not_found"."""

    def __init__(self, code: Refusal) -> None:
        super().__init__(code)
        self.code = code


class StreamOverloaded(ChatError):
    """This process is at SSE_MAX_STREAMS: 503, come back after `retry_after` seconds."""

    def __init__(self) -> None:
        super().__init__(
            "stream_overloaded",
            _("Too many open event streams on this server; reconnect in a few seconds."),
            status=503,
        )
        base = max(1, math.ceil(settings.SSE_RETRY_MS / 1000))
        self.retry_after = random.randint(base, 10 * base)  # noqa: S311 - jitter


async def stream_open(
    *,
    conversation_id: int,
    last_event_id: int,
    authorize: Callable[[], Refusal | None] | None = None,
    keepalive: float | None = None,
) -> EventStreamResponse:
    """Open a conversation's stream, or raise StreamOverloaded or StreamRefused.

    `authorize` is a synchronous access check returning a refusal or None; it runs on
    the fan-out's database threads.
    Then the stream joins the conversation's feed and replays what it missed. Keep-alive
    comments come every SSE_KEEPALIVE_SECONDS (one timer per process), or after
    `keepalive` idle seconds if given.
    """
    frames = await _open(
        conversation_id=conversation_id,
        last_event_id=last_event_id,
        authorize=authorize,
        keepalive=keepalive,
    )
    return EventStreamResponse(frames)


class EventStreamResponse(StreamingHttpResponse):
    """A conversation's stream. `frames` is its generator of finished SSE frames, which
    `chat.edge.stream_asgi` sends as they are (Django's wrappers copy every frame)."""

    def __init__(self, frames: AsyncGenerator[bytes, None]) -> None:
        super().__init__(frames, content_type="text/event-stream; charset=utf-8")
        self.frames = frames
        self["Cache-Control"] = "no-cache, no-transform"
        self["X-Accel-Buffering"] = "no"


async def conversation_stream(
    *, conversation_id: int, last_event_id: int, keepalive: float | None = None
) -> AsyncIterator[bytes]:
    """A conversation's stream without an access check (the views check access first)."""
    frames = await _open(
        conversation_id=conversation_id, last_event_id=last_event_id, keepalive=keepalive
    )
    async with contextlib.aclosing(frames):
        async for chunk in frames:
            yield chunk


async def _open(
    *,
    conversation_id: int,
    last_event_id: int,
    authorize: Callable[[], Refusal | None] | None = None,
    keepalive: float | None = None,
) -> AsyncGenerator[bytes, None]:
    hub = fanout.hub(_render)
    try:
        listener = hub.reserve()
    except fanout.Full:
        raise StreamOverloaded() from None
    try:
        refusal = None if authorize is None else await hub.db(authorize)
        if refusal is not None:
            raise StreamRefused(refusal)
        await hub.subscribe(listener, conversation_id)
        replay = await hub.db(
            event_rows_after,
            conversation_id=conversation_id,
            after_id=last_event_id,
            limit=fanout.PAGE,
        )
    except BaseException:
        hub.release(listener)
        raise
    if len(replay) == fanout.PAGE:
        listener.behind = True  # more to replay: the stream reads on from the database
    frames = _frames(
        hub=hub,
        listener=listener,
        conversation_id=conversation_id,
        replay=replay,
        cursor=last_event_id,
        keepalive=keepalive,
    )
    # A response dropped before it was iterated never runs the generator's `finally`.
    weakref.finalize(frames, hub.release_soon, listener).atexit = False
    return frames


async def _frames(
    *,
    hub: fanout.Hub,
    listener: fanout.Listener,
    conversation_id: int,
    replay: list[EventRow],
    cursor: int,
    keepalive: float | None,
) -> AsyncGenerator[bytes, None]:
    try:
        _release_request_thread()
        # Tell EventSource how long to wait before reconnecting, then catch up.
        yield f"retry: {retry_ms()}\n: connected\n\n".encode()
        replay.reverse()
        while replay:  # popped as sent: a long-lived stream keeps none of its replay
            event = replay.pop()
            cursor = event.id
            yield _render(event)
        while True:
            if listener.behind:
                listener.behind = False
                while True:  # fell behind (or a long replay): read on by this stream's cursor
                    events = await hub.db(
                        event_rows_after,
                        conversation_id=conversation_id,
                        after_id=cursor,
                        limit=fanout.PAGE,
                    )
                    for event in events:
                        cursor = event.id
                        yield _render(event)
                    if len(events) < fanout.PAGE:
                        break
            for event_id, frame in listener.take():
                if event_id > cursor:  # frames from before the replay are skipped
                    cursor = event_id
                    yield frame
            if listener.ping:
                listener.ping = False
                yield b": keep-alive\n\n"
            await listener.wait(keepalive)
    finally:
        hub.release(listener)


def _release_request_thread() -> None:
    """Let the request's thread go while its stream stays open.

    Django's ASGI handler gives every request a thread for its synchronous parts
    (asgiref's ThreadSensitiveContext) and keeps it until the response ends: an open
    stream would hold an idle thread for hours. A stream's database work runs on the
    fan-out's threads, so this one has nothing left to do; shut it down now. (The
    response's `close()` at the end gets a fresh thread for its moment.)
    """
    context_var = getattr(SyncToAsync, "thread_sensitive_context", None)
    executors = getattr(SyncToAsync, "context_to_thread_executor", None)
    context = context_var.get(None) if context_var is not None else None
    if context is None or executors is None:
        return  # not under Django's ASGI handler (the test client, a direct caller)
    executor = executors.pop(context, None)
    if executor is not None:
        executor.shutdown(wait=False)
