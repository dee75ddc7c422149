"""A tool call's progress notes (`notifications/progress`), shown to the person.

The host asks every call it makes for progress (the SDK sends a `progressToken` with a
call that has a progress callback): the worker's 2026-07-28 rounds and the session
host's calls alike. Each note becomes a `tool_progress` event of the conversation —
`{tool_call_id, progress, total, message}` — which the page shows live on the call's line
of the run (static/js/run.js), and the events API streams like any other event.

Throttled per call: at most one note every MCP_PROGRESS_INTERVAL seconds (the newest one
held back is sent when the interval is over), and the last one (progress reaching
total) at once, so a server reporting every item of a long job can't flood the stream
or the event table (old notes are pruned with old text deltas).
Notes are taken one at a time in the order they came, and one not newer than a note
already taken is dropped (MCP: progress only grows). A note that can't be stored is
logged and dropped: progress never fails a call.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable

import anyio
from django.conf import settings
from django.db import connections

from chat.core.services import event_emit

logger = logging.getLogger(__name__)

MESSAGE_MAX = 200  # characters of a note's message shown

# Runs ORM work off the event loop: (function) -> awaitable of its result.
Db = Callable[[Callable[[], None]], Awaitable[None]]


async def _in_thread(work: Callable[[], None]) -> None:
    def run() -> None:
        try:
            work()
        finally:  # the loop's threads outlive the call: give the connection back
            connections.close_all()

    await anyio.to_thread.run_sync(run)


def note_data(
    tool_call_id: str, progress: object, total: object, message: object
) -> dict[str, object] | None:
    """The event's data for one note, or None when it is no note (not a finite number)."""
    if not _finite(progress):
        return None
    data: dict[str, object] = {
        "tool_call_id": tool_call_id,
        "progress": progress,
        "total": total if _finite(total) and total > 0 else None,  # type: ignore[operator]
        "message": " ".join(str(message).split())[:MESSAGE_MAX] if message else "",
    }
    return data


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class Reporter:
    """The progress callback of one call (`db` runs the event's write off the loop).

    A note inside the interval is held and sent when the interval is over, unless a
    newer one replaces it first, so what the person sees is never more than one interval
    behind the server; `close()` drops a held note once the call has its result."""

    def __init__(self, *, conversation_id: int, tool_call_id: str, db: Db | None = None):
        self.conversation_id = conversation_id
        self.tool_call_id = tool_call_id
        self.db = db or _in_thread
        self.last = -math.inf
        self.held: dict[str, object] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        # The SDK may hand notes over concurrently: one at a time, in the order they came
        # (the lock is first come, first served), and never one older than a note taken.
        self.lock = asyncio.Lock()
        self.newest = -math.inf

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        # Shielded: the SDK cancels its note tasks when the call's connection closes, which
        # may be right after the last note (a note waiting its turn would be lost).
        with anyio.CancelScope(shield=True):
            async with self.lock:
                await self._take(progress, total, message)

    async def _take(self, progress: float, total: float | None, message: str | None) -> None:
        data = note_data(self.tool_call_id, progress, total, message)
        if data is None or progress <= self.newest:
            return
        self.newest = progress
        final = data["total"] is not None and progress >= data["total"]  # type: ignore[operator]
        wait = self.last + settings.MCP_PROGRESS_INTERVAL - time.monotonic()
        if final or wait <= 0:
            self._cancel_timer()
            self.held = None
            await self._store(data)
            return
        self.held = data
        if self.timer is None:
            loop = asyncio.get_running_loop()
            self.timer = loop.call_later(wait, self._flush_soon, loop)

    def _flush_soon(self, loop: asyncio.AbstractEventLoop) -> None:
        self.timer = None
        task = loop.create_task(self._flush())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _flush(self) -> None:
        async with self.lock:
            data, self.held = self.held, None
            if data is not None:
                await self._store(data)

    async def _store(self, data: dict[str, object]) -> None:
        self.last = time.monotonic()

        def store() -> None:
            event_emit(conversation_id=self.conversation_id, name="tool_progress", data=data)

        try:
            await self.db(store)
        except Exception:
            logger.warning("progress note of call %s not stored", self.tool_call_id, exc_info=True)

    def _cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def close(self) -> None:
        self._cancel_timer()
        self.held = None


def reporter(*, conversation_id: int, tool_call_id: str, db: Db | None = None) -> Reporter:
    return Reporter(conversation_id=conversation_id, tool_call_id=tool_call_id, db=db)
