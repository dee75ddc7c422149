"""Per-process fan-out of conversation events to the open streams.

Every open stream of a conversation in this process is a `Listener` of one `Feed`. The feed
is the process's only member of the conversation's channel-layer group (through the
process's one channel), reads each new event from the database once, renders its SSE frame
once, and hands the frame to every listener. An idle stream is a listener waiting on a
future: no query, no thread, no channel of its own.

Why nothing is lost (events are rows; wake-ups only say "look"):

- `event_emit` commits a conversation's events in id order and wakes the group after the
  commit. A feed reads `id > cursor`, so it reads every event once, in order, from the
  cursor it started at: the newest id, read after it joined the group.
- A listener joins its feed *before* it replays from the database, so every event committed
  after its replay is read by the feed while the listener is there; frames it already has
  are skipped by id.
- A wake-up can be lost (a full channel, a Redis restart, an expired group, a process that
  died between its commit and its wake-up). Every SSE_CATCHUP_SECONDS one query per
  process looks for feeds with events past their cursor (one timer, not one per stream;
  every SSE_KEEPALIVE_SECONDS the same tick sends every stream its keep-alive comment).
  After the channel layer failed (Redis restarted and forgot the groups), the process
  joins its groups again as soon as the layer answers.
- A listener whose inbox overflows (a client that reads too slowly) drops its inbox and
  catches up from the database by its own cursor.

Database work (stream opens, feed reads, the periodic check) runs on this module's small
thread pool, which keeps its connections between calls: a request's own thread would open a
new connection per stream and stay alive, idle, as long as the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import resource
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from channels.layers import get_channel_layer
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

from chat.core.dbfaults import connection_lost, connections_reset
from chat.core.realtime import conversation_group, register_stream_loop
from chat.edge.stream_selectors import (
    EventRow,
    conversations_with_events_after,
    event_last_id,
    event_rows_after,
)
from chat.obs import metrics

logger = logging.getLogger(__name__)

T = TypeVar("T")
Frame = tuple[int, bytes]  # (event id, the rendered SSE frame)
PAGE = 500  # events per database read
INBOX_LIMIT = 2000  # frames a listener may have pending before it catches up from the database
GROUP_REFRESH_SECONDS = 3600.0  # re-join groups well before the layers' 1-day group expiry
LOCKED_RETRIES = 40  # tries of a read that found a table locked, 5 ms apart

_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sse-db")
_hub: Hub | None = None


class Full(Exception):
    """The process has SSE_MAX_STREAMS streams open (or opening)."""


class UserFull(Exception):
    """This user has SSE_MAX_STREAMS_PER_USER streams open in this process."""


def hub(render: Callable[[EventRow], bytes]) -> Hub:
    """This event loop's hub (one per process in production; tests run a loop each)."""
    global _hub
    loop = asyncio.get_running_loop()
    if _hub is None or _hub.loop is not loop:
        _hub = Hub(loop, render)
    return _hub


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Listener:
    """One open stream's inbox: frames the feed read since the stream last looked."""

    __slots__ = ("behind", "feed", "frames", "ping", "released", "user", "_waiter")

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.user: int | None = None  # whose stream it is, once claimed
        self.behind = False  # the inbox overflowed: catch up from the database
        self.ping = False  # a keep-alive comment is due
        self.feed: Feed | None = None
        self.released = False
        self._waiter: asyncio.Future[None] | None = None

    def push(self, frames: list[Frame]) -> None:
        if self.behind:
            return
        if len(self.frames) + len(frames) > INBOX_LIMIT:
            self.frames, self.behind = [], True
        else:
            self.frames.extend(frames)
        if self._waiter is not None:
            _settle(self._waiter)

    def keepalive(self) -> None:
        self.ping = True
        if self._waiter is not None:
            _settle(self._waiter)

    def take(self) -> list[Frame]:
        frames, self.frames = self.frames, []
        return frames

    async def wait(self, timeout: float | None = None) -> None:
        """Until frames arrive, the listener falls behind, or a keep-alive is due: every
        SSE_KEEPALIVE_SECONDS the hub pings all listeners (one timer for all of them), or
        after `timeout` seconds of waiting if one is given."""
        if self.frames or self.behind or self.ping:
            return
        loop = asyncio.get_running_loop()
        self._waiter = waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, self.keepalive)
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()
            self._waiter = None


class Feed:
    """One conversation's subscription in this process, shared by its listeners."""

    def __init__(self, hub: Hub, conversation_id: int) -> None:
        self.hub = hub
        self.conversation_id = conversation_id
        self.group = conversation_group(conversation_id)
        self.listeners: set[Listener] = set()
        self.cursor = 0  # the newest event id this feed has read (or started after)
        self.channel = ""  # the hub's channel when this feed joined the group
        self.ready: asyncio.Future[None] = hub.loop.create_future()
        self._dirty = asyncio.Event()
        self.task = hub.spawn(self._run())

    def note(self, event_id: int) -> None:
        """A wake-up: read if it announces an event this feed hasn't read yet."""
        if event_id > self.cursor:
            self._dirty.set()

    def check(self) -> None:
        """The periodic check found events past the cursor (a wake-up went missing)."""
        self._dirty.set()

    async def _run(self) -> None:
        try:
            await self._arm()
        except Exception as exc:  # the opens waiting for this feed fail; a later one retries
            self.ready.set_exception(exc)
            self.ready.exception()  # retrieved here: nobody else may be waiting
            self.hub.drop(self)
            return
        self.ready.set_result(None)
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            try:
                await self._read()
            except Exception:  # the database may be restarting: keep the cursor, retry
                logger.exception("stream fan-out read failed (conversation %s)", self.group)
                self._dirty.set()
                await asyncio.sleep(1)

    async def _arm(self) -> None:
        # A previous feed of this conversation may still be leaving the group.
        leaving = self.hub.leaving.get(self.conversation_id)
        if leaving is not None:
            await asyncio.shield(leaving)
        self.channel = self.hub.channel
        try:
            await self.hub.layer.group_add(self.group, self.channel)
        except Exception:  # the layer is down (Redis restarting): the check covers it
            logger.warning("could not join %s; joining again later", self.group, exc_info=True)
            self.hub.groups_stale = True
        # After joining: every event newer than this will be announced or found by the sweep.
        self.cursor = await self.hub.db(event_last_id, conversation_id=self.conversation_id)

    async def _read(self) -> None:
        """One read per process: render each new event once, hand it to every listener."""
        while True:
            events = await self.hub.db(
                event_rows_after,
                conversation_id=self.conversation_id,
                after_id=self.cursor,
                limit=PAGE,
            )
            if not events:
                return
            render = self.hub.render
            frames = [(event.id, render(event)) for event in events]
            self.cursor = events[-1].id
            for listener in list(self.listeners):
                listener.push(frames)
            if len(events) < PAGE:
                return


class Hub:
    """This process's listeners and feeds, its channel, and the periodic tick: the
    catch-up check and every listener's keep-alive."""

    def __init__(self, loop: asyncio.AbstractEventLoop, render: Callable[[EventRow], bytes]):
        self.loop = loop
        self.render = render
        self.layer = get_channel_layer()
        self.feeds: dict[int, Feed] = {}
        self.leaving: dict[int, asyncio.Task[None]] = {}
        self.open = 0  # listeners reserved or subscribed (what SSE_MAX_STREAMS limits)
        self.by_user: dict[int, int] = {}  # open listeners per user (SSE_MAX_STREAMS_PER_USER)
        self.channel = ""
        # The layer failed (it may have forgotten this process's groups): join them again
        # as soon as it answers.
        self.groups_stale = False
        self._started: asyncio.Future[None] | None = None
        self._loops: list[asyncio.Task[None]] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- streams ---------------------------------------------------------------------------

    def reserve(self) -> Listener:
        """A slot for a stream that is about to open; raises Full at SSE_MAX_STREAMS."""
        if self.open >= settings.SSE_MAX_STREAMS:
            metrics.STREAMS_REFUSED.labels("overloaded").inc()
            raise Full()
        self.open += 1
        metrics.STREAMS_OPEN.inc()
        return Listener()

    def claim(self, listener: Listener, user_id: int) -> None:
        """Count a reserved listener as the user's; raises UserFull at
        SSE_MAX_STREAMS_PER_USER, so one person can't take the whole process's share."""
        if self.by_user.get(user_id, 0) >= settings.SSE_MAX_STREAMS_PER_USER:
            metrics.STREAMS_REFUSED.labels("user").inc()
            raise UserFull()
        self.by_user[user_id] = self.by_user.get(user_id, 0) + 1
        listener.user = user_id

    async def subscribe(self, listener: Listener, conversation_id: int) -> None:
        """Attach the listener to the conversation's feed (joining the group if new).

        When this returns, every event committed from now on reaches the listener's inbox.
        """
        await self._start()
        feed = self.feeds.get(conversation_id)
        if feed is None:
            feed = self.feeds[conversation_id] = Feed(self, conversation_id)
        feed.listeners.add(listener)
        listener.feed = feed
        await asyncio.shield(feed.ready)

    def release(self, listener: Listener) -> None:
        """The stream ended (or never opened). Safe to call more than once."""
        if listener.released:
            return
        listener.released = True
        self.open -= 1
        metrics.STREAMS_OPEN.dec()
        if listener.user is not None:
            left = self.by_user.pop(listener.user) - 1
            if left:
                self.by_user[listener.user] = left
        feed, listener.feed = listener.feed, None
        if feed is not None:
            feed.listeners.discard(listener)
            if not feed.listeners:
                self.drop(feed)
        if self.open == 0 and not self.feeds:
            self._stop()

    def release_soon(self, listener: Listener) -> None:
        """`release` from anywhere (a garbage-collected response may be freed off-loop)."""
        if not listener.released and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.release, listener)

    async def db(self, function: Callable[..., T], /, **kwargs: Any) -> T:
        """Run a synchronous database function on the stream threads.

        Plainly, without asgiref's context hand-over (a third of an open's cost on the
        event loop): these functions need no context variables, and they return refusals
        rather than raise translated messages.
        """
        return await self.loop.run_in_executor(_executor, _db_call, function, kwargs)

    # -- feeds -----------------------------------------------------------------------------

    def drop(self, feed: Feed) -> None:
        """Close a feed: stop reading, leave the group (a new feed waits for that)."""
        if self.feeds.get(feed.conversation_id) is not feed:
            return
        del self.feeds[feed.conversation_id]
        feed.task.cancel()
        for listener in feed.listeners:  # only when arming failed: their opens fail too
            listener.feed = None
        task = self.spawn(self._leave(feed))
        self.leaving[feed.conversation_id] = task

    async def _leave(self, feed: Feed) -> None:
        try:
            if feed.channel:
                await self.layer.group_discard(feed.group, feed.channel)
        except Exception:  # the group expires by itself; stale wake-ups are ignored
            logger.warning("could not leave %s", feed.group, exc_info=True)
        finally:
            if self.leaving.get(feed.conversation_id) is asyncio.current_task():
                del self.leaving[feed.conversation_id]

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """A background task in an empty context: it must not inherit the request's
        thread-sensitive context (whose thread is gone once the request streams)."""
        task = self.loop.create_task(coroutine, context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- the process's channel and the periodic check ----------------------------------

    async def _start(self) -> None:
        if self._started is None:
            self._started = self.loop.create_future()
            self.spawn(self._open_channel(self._started))
        await asyncio.shield(self._started)

    async def _open_channel(self, started: asyncio.Future[None]) -> None:
        try:
            register_stream_loop()
            _raise_fd_limit(settings.SSE_MAX_STREAMS)
            self.channel = await self.layer.new_channel()
        except Exception as exc:
            if self._started is started:
                self._started = None  # the next stream tries again
            started.set_exception(exc)
            started.exception()
            return
        if self._started is started:  # (not stopped meanwhile)
            self._loops = [self.spawn(self._receive()), self.spawn(self._sweep())]
        started.set_result(None)

    def _stop(self) -> None:
        """No streams left: stop listening (a later stream starts again)."""
        for task in self._loops:
            task.cancel()
        self._loops = []
        self._started = None

    async def _receive(self) -> None:
        while True:
            try:
                if self.groups_stale:  # the layer may have lost its groups (a Redis restart)
                    await self._refresh_groups(strict=True)
                    self.groups_stale = False
                message = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:  # the sweep covers what is missed meanwhile
                logger.warning("channel layer receive failed", exc_info=True)
                self.groups_stale = True
                await asyncio.sleep(0.5)
                continue
            feed = self.feeds.get(message.get("conversation", 0))
            if feed is not None:
                feed.note(int(message.get("id", 0)))

    async def _sweep(self) -> None:
        refreshed = pinged = self.loop.time()
        while True:
            await asyncio.sleep(min(settings.SSE_CATCHUP_SECONDS, settings.SSE_KEEPALIVE_SECONDS))
            cursors = {cid: feed.cursor for cid, feed in self.feeds.items() if feed.ready.done()}
            if cursors:
                try:
                    behind = await self.db(conversations_with_events_after, cursors=cursors)
                except Exception:
                    logger.warning("stream catch-up check failed", exc_info=True)
                    behind = set()
                for conversation_id in behind:
                    feed = self.feeds.get(conversation_id)
                    if feed is not None:
                        feed.check()
            if self.loop.time() - pinged >= settings.SSE_KEEPALIVE_SECONDS - 0.01:
                pinged = self.loop.time()
                for feed in list(self.feeds.values()):
                    for listener in feed.listeners:
                        listener.keepalive()
            if self.groups_stale:  # (the receive loop may be waiting on a live layer)
                with contextlib.suppress(Exception):
                    await self._refresh_groups(strict=True)
                    self.groups_stale = False
            if self.loop.time() - refreshed > GROUP_REFRESH_SECONDS:
                refreshed = self.loop.time()
                await self._refresh_groups()

    async def _refresh_groups(self, *, strict: bool = False) -> None:
        """Join every feed's group again (groups expire; a restarted Redis forgot them).
        `strict`: raise on the first failure (the layer is still down)."""
        for feed in list(self.feeds.values()):
            if feed.channel:
                try:
                    await self.layer.group_add(feed.group, feed.channel)
                except Exception:
                    if strict:
                        raise
                    logger.warning("could not re-join %s", feed.group, exc_info=True)


def _db_call(function: Callable[..., T], kwargs: dict[str, Any]) -> T:
    """On a stream thread: run, then give back what must not be kept.

    A PostgreSQL connection goes back to the pool after every call (CONN_MAX_AGE rules);
    a SQLite one stays open (reopening it costs about a millisecond) unless it failed.
    """
    try:
        for attempt in range(LOCKED_RETRIES):
            try:
                return function(**kwargs)
            except (OperationalError, InterfaceError) as exc:
                if attempt < 2 and connection_lost(exc):
                    # A dropped connection (database restart): these are reads, read again.
                    connections_reset()
                    continue
                # SQLite's shared-cache mode (the in-memory test database) reports a
                # writer's table lock at once instead of waiting like a file database.
                if "locked" not in str(exc) or attempt == LOCKED_RETRIES - 1:
                    raise
                time.sleep(0.005)
        raise AssertionError("unreachable")
    finally:
        for connection in connections.all(initialized_only=True):
            if connection.vendor != "sqlite" or connection.errors_occurred:
                connection.close_if_unusable_or_obsolete()


def _raise_fd_limit(streams: int) -> None:
    """Every stream is a socket: lift the soft open-files limit (up to the hard one)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = streams + 1024
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            logger.warning("could not raise the open-files limit to %s", target)
