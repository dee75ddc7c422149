"""The per-process fan-out (chat.edge.fanout): one read per event per process, nothing lost."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer
from django.db import OperationalError

from chat.core.services import event_emit
from chat.edge import fanout
from chat.edge.sse import conversation_stream

pytestmark = pytest.mark.django_db(transaction=True)

emit = database_sync_to_async(event_emit)


def _frames(chunk: bytes) -> list[dict[str, str]]:
    """Every event frame in a chunk (comments and `retry:` skipped)."""
    frames = []
    for block in chunk.decode().split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":")
        )
        if "event" in fields:
            frames.append(fields)
    return frames


class Reader:
    """Reads one stream in the background; `frames` grows as events arrive."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.frames: list[dict[str, str]] = []
        self.connected = asyncio.Event()
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for chunk in self.stream:
                if chunk.startswith(b"retry:"):
                    self.connected.set()
                self.frames.extend(_frames(chunk))
        finally:
            self.connected.set()  # a stream that failed to open fails its test at once

    def check(self) -> None:
        if self.task.done() and not self.task.cancelled() and self.task.exception():
            raise self.task.exception()  # type: ignore[misc]

    @property
    def ids(self) -> list[int]:
        return [int(f["id"]) for f in self.frames]

    async def until(self, count: int, timeout: float = 5.0) -> list[int]:
        async def wait() -> None:
            while len(self.frames) < count:
                self.check()
                await asyncio.sleep(0.01)

        await asyncio.wait_for(wait(), timeout)
        return self.ids

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        await self.stream.aclose()


async def _open(conversation_id: int, count: int, last_event_id: int = 0) -> list[Reader]:
    readers = [
        Reader(conversation_stream(conversation_id=conversation_id, last_event_id=last_event_id))
        for _ in range(count)
    ]
    await asyncio.wait_for(asyncio.gather(*(r.connected.wait() for r in readers)), 10)
    for reader in readers:
        reader.check()
    return readers


async def _group_members(layer, group: str) -> list[str]:
    """The channels in a channel-layer group (one per process with open streams)."""
    if isinstance(layer, InMemoryChannelLayer):
        return list(layer.groups.get(group, {}))
    key = layer._group_key(group)  # channels_redis: a sorted set of channel names
    members = await layer.connection(layer.consistent_hash(group)).zrange(key, 0, -1)
    return [m.decode() for m in members]


@pytest.fixture
def feed_reads(monkeypatch):
    """Counts the fan-out's database reads (not the streams' own replays)."""
    calls: list[int] = []
    original = fanout.event_rows_after

    def counting(**kwargs):
        calls.append(kwargs["conversation_id"])
        return original(**kwargs)

    monkeypatch.setattr(fanout, "event_rows_after", counting)
    return calls


async def test_many_streams_get_an_event_from_one_read(conversation, feed_reads):
    from channels.layers import get_channel_layer

    group = f"conversation-{conversation.pk}"
    before = set(await _group_members(get_channel_layer(), group))  # (Redis: earlier runs')
    readers = await _open(conversation.pk, 50)
    hub = fanout._hub
    assert hub is not None and hub.open == 50 and len(hub.feeds) == 1
    # One member of the conversation's group for this process, not one per stream.
    assert set(await _group_members(hub.layer, group)) - before == {hub.channel}

    event = await emit(conversation_id=conversation.pk, name="message_done", data={"n": 1})
    for reader in readers:
        assert await reader.until(1) == [event.id]
    assert feed_reads == [conversation.pk]  # one read for 50 streams
    assert json.loads(readers[0].frames[0]["data"]) == {"n": 1}

    for reader in readers:
        await reader.close()
    assert hub.open == 0 and hub.feeds == {}


async def test_a_lost_wakeup_is_recovered_by_the_periodic_check(
    conversation, feed_reads, monkeypatch, settings
):
    # The check runs on its own, shorter period than the keep-alive comments.
    settings.SSE_CATCHUP_SECONDS, settings.SSE_KEEPALIVE_SECONDS = 0.2, 60
    (reader,) = await _open(conversation.pk, 1)
    monkeypatch.setattr("chat.core.services.wake", lambda conversation_id, event_id: None)
    event = await emit(conversation_id=conversation.pk, name="text_delta", data={})
    assert await reader.until(1, timeout=3) == [event.id]
    assert feed_reads == [conversation.pk]  # found by the check, then read once
    await reader.close()


async def test_groups_are_joined_again_after_the_layer_failed(conversation, monkeypatch, settings):
    """A restarted Redis forgets every group: once the layer answers again, the process
    joins its groups again, so wake-ups (not only the periodic check) reach its streams."""
    settings.SSE_CATCHUP_SECONDS = 60  # the receive loop itself joins again
    (reader,) = await _open(conversation.pk, 1)
    hub = fanout._hub
    assert hub is not None
    original = hub.layer.receive
    failures = [ConnectionError("Connection refused")]

    async def flaky(channel):
        if failures:
            raise failures.pop()
        return await original(channel)

    monkeypatch.setattr(hub.layer, "receive", flaky)
    group = f"conversation-{conversation.pk}"
    await hub.layer.group_discard(group, hub.channel)  # what the restart did
    hub._loops[0].cancel()  # the receive loop, restarted to meet the failure at once
    hub._loops[0] = hub.spawn(hub._receive())
    for _ in range(100):
        if hub.channel in await _group_members(hub.layer, group):
            break
        await asyncio.sleep(0.02)
    event = await emit(conversation_id=conversation.pk, name="message_done", data={})
    assert await reader.until(1, timeout=3) == [event.id]
    await reader.close()


async def test_a_feed_opens_while_the_layer_is_down_and_joins_once_it_is_back(
    conversation, monkeypatch, settings
):
    """A stream opened during a Redis restart works (the check delivers) and its feed
    joins the group when the layer answers again."""
    from channels.layers import get_channel_layer

    settings.SSE_CATCHUP_SECONDS = 0.1
    layer = get_channel_layer()
    original = layer.group_add
    down = [ConnectionError("Connection refused")]

    async def flaky(group, channel):
        if down:
            raise down.pop()
        return await original(group, channel)

    monkeypatch.setattr(layer, "group_add", flaky)
    (reader,) = await _open(conversation.pk, 1)
    hub = fanout._hub
    assert hub is not None
    event = await emit(conversation_id=conversation.pk, name="message_done", data={})
    assert await reader.until(1, timeout=3) == [event.id]
    group = f"conversation-{conversation.pk}"
    for _ in range(100):
        if hub.channel in await _group_members(layer, group):
            break
        await asyncio.sleep(0.02)
    assert hub.channel in await _group_members(layer, group) and not hub.groups_stale
    await reader.close()


async def test_a_stream_that_falls_behind_catches_up_from_the_database(conversation, monkeypatch):
    monkeypatch.setattr(fanout, "INBOX_LIMIT", 3)
    stream = conversation_stream(conversation_id=conversation.pk, last_event_id=0)
    assert (await stream.__anext__()).startswith(b"retry:")  # open, then not reading
    emitted = [
        (await emit(conversation_id=conversation.pk, name="text_delta", data={"n": n})).id
        for n in range(10)
    ]
    hub = fanout._hub
    assert hub is not None
    for _ in range(100):  # the feed has read all ten and overflowed the inbox
        if hub.feeds[conversation.pk].cursor == emitted[-1]:
            break
        await asyncio.sleep(0.02)
    listener = next(iter(hub.feeds[conversation.pk].listeners))
    assert listener.behind and listener.frames == []

    reader = Reader(stream)
    assert await reader.until(10) == emitted  # each once, in order
    later = await emit(conversation_id=conversation.pk, name="message_done", data={})
    assert await reader.until(11) == [*emitted, later.id]
    await reader.close()


async def test_last_event_id_replay_is_exact(conversation):
    ids = [
        (await emit(conversation_id=conversation.pk, name="text_delta", data={"n": n})).id
        for n in range(5)
    ]
    (reader,) = await _open(conversation.pk, 1, last_event_id=ids[1])
    assert await reader.until(3) == ids[2:]
    later = await emit(conversation_id=conversation.pk, name="message_done", data={})
    assert await reader.until(4) == [*ids[2:], later.id]
    await asyncio.sleep(0.2)
    assert reader.ids == [*ids[2:], later.id]  # nothing twice (the feed saw them too)
    await reader.close()


async def test_a_replay_longer_than_a_page_continues_from_the_database(conversation, monkeypatch):
    monkeypatch.setattr(fanout, "PAGE", 3)
    ids = [
        (await emit(conversation_id=conversation.pk, name="text_delta", data={"n": n})).id
        for n in range(8)
    ]
    (reader,) = await _open(conversation.pk, 1)
    assert await reader.until(8) == ids
    await reader.close()


async def test_streams_joining_a_busy_conversation_miss_nothing(conversation):
    """Streams open while events are being emitted: each gets every later event once."""
    first = await emit(conversation_id=conversation.pk, name="run_started", data={})

    async def emitter() -> list[int]:
        ids = []
        for n in range(30):
            for _attempt in range(50):
                try:
                    event = await emit(
                        conversation_id=conversation.pk, name="text_delta", data={"n": n}
                    )
                    break
                except OperationalError as exc:
                    # The in-memory test database (SQLite shared cache) refuses a write
                    # while a stream reads, where a file database in WAL mode would not.
                    assert "locked" in str(exc)
                    await asyncio.sleep(0.01)
            ids.append(event.id)
            await asyncio.sleep(0.005)
        return ids

    producing = asyncio.ensure_future(emitter())
    readers = []
    for _ in range(10):
        readers += await _open(conversation.pk, 1, last_event_id=first.id)
        await asyncio.sleep(0.01)
    ids = await producing
    for reader in readers:
        assert await reader.until(30) == ids
    for reader in readers:
        await reader.close()


async def test_two_conversations_have_two_feeds(conversation, user, feed_reads):
    from chat.core.services import conversation_create

    other = await database_sync_to_async(conversation_create)(owner=user, agent="echo")
    (a,) = await _open(conversation.pk, 1)
    (b,) = await _open(other.pk, 1)
    event = await emit(conversation_id=other.pk, name="text_delta", data={})
    assert await b.until(1) == [event.id]
    await asyncio.sleep(0.1)
    assert a.ids == [] and feed_reads == [other.pk]
    await a.close()
    await b.close()
