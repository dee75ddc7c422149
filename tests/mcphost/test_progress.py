"""MCP progress notes (chat.mcphost.progress): a stock Python-SDK server's
`ctx.report_progress` during a tool call becomes the conversation's `tool_progress`
events — on the worker's 2026-07-28 rounds and in the session host's 2025-11-25 calls —
throttled per call, with nonsense notes dropped."""

from __future__ import annotations

import asyncio
import math

import pytest

from chat.core.models import Event
from chat.mcphost import health
from chat.mcphost.models import McpServer
from chat.mcphost.progress import note_data, reporter
from chat.mcphost.records import McpCall
from tests.support.mcp_flow import finished, text_of, tool_result


def test_a_note_is_numbers_and_a_short_line_or_nothing():
    assert note_data("c", 2, 5, "Half\nway") == {
        "tool_call_id": "c",
        "progress": 2,
        "total": 5,
        "message": "Half way",
    }
    assert note_data("c", 1.5, None, None)["total"] is None
    assert note_data("c", 1, 0, "")["total"] is None  # no total worth a bar
    assert note_data("c", 1, math.inf, "x")["total"] is None
    assert len(note_data("c", 1, 2, "y" * 5000)["message"]) == 200
    for nonsense in (math.nan, math.inf, True, "3", None):
        assert note_data("c", nonsense, 5, "x") is None


def _collect(interval: float, notes, settings, *, close_after=False, interval_over=False):
    """The notes `reporter` stores for `notes` sent one after another (`interval_over`:
    then the interval ends, without waiting for the clock)."""
    settings.MCP_PROGRESS_INTERVAL = interval
    stored: list[dict] = []

    async def db(work):
        from unittest import mock

        with mock.patch("chat.mcphost.progress.event_emit", lambda **kw: stored.append(kw["data"])):
            work()

    async def main():
        report = reporter(conversation_id=1, tool_call_id="call", db=db)
        for note in notes:
            await report(*note)
        if close_after:
            report.close()
        if interval_over:
            assert report.timer is not None  # it is scheduled for the interval's end
            report.timer.cancel()
            report._flush_soon(asyncio.get_running_loop())
        while report.tasks:
            await asyncio.sleep(0)
        if interval:
            report.close()

    asyncio.run(main())
    return [(d["progress"], d["total"], d["message"]) for d in stored]


def test_notes_inside_the_interval_are_held_and_the_newest_sent(settings):
    notes = [(i, 10, f"{i}") for i in range(1, 10)]
    # first at once; the rest held, only the newest of them sent when the interval ends
    assert _collect(3600, notes, settings, interval_over=True) == [(1, 10, "1"), (9, 10, "9")]
    # the last (progress reaching total) always goes at once, and replaces a held one
    assert _collect(3600, [*notes, (10, 10, "done")], settings) == [
        (1, 10, "1"),
        (10, 10, "done"),
    ]
    # the call's result came: a held note is dropped
    assert _collect(3600, notes, settings, close_after=True) == [(1, 10, "1")]
    assert _collect(0, notes[:3], settings) == [(1, 10, "1"), (2, 10, "2"), (3, 10, "3")]


def test_notes_handed_over_at_once_are_stored_in_order_and_never_go_back(settings):
    """The SDK runs each note's callback as a task of its own: a slow write of the first
    must not let a later one overtake it, and a note older than one taken is dropped."""
    settings.MCP_PROGRESS_INTERVAL = 0
    stored: list[float] = []
    writes = iter([0.05])  # the first write is the slowest

    async def db(work):
        from unittest import mock

        await asyncio.sleep(next(writes, 0))
        with mock.patch(
            "chat.mcphost.progress.event_emit", lambda **kw: stored.append(kw["data"]["progress"])
        ):
            work()

    async def main():
        report = reporter(conversation_id=1, tool_call_id="call", db=db)
        await asyncio.gather(*(report(p, 5, "") for p in (1, 2, 4, 3, 5)))

    asyncio.run(main())
    assert stored == [1, 2, 4, 5]  # 3 came after 4: stale


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_a_stock_servers_progress_reaches_the_conversation(run_tool, stock_url, settings, revision):
    settings.MCP_PROGRESS_INTERVAL = 0  # every note (the throttle has its own test)
    if revision == "2025-11-25":  # the session host's way
        McpServer.objects.update_or_create(
            name="srv", defaults={"url": stock_url, "agents": ["scripted"], "enabled": True}
        )
        health.mark_needs_back_channel(McpServer.objects.get(name="srv").pk, "count")
    conversation = run_tool("count", stock_url, {"n": 3})
    finished(conversation)
    assert text_of(tool_result(conversation)) == "counted to 3"
    (call,) = McpCall.objects.all()
    assert call.revision == revision
    events = list(Event.objects.filter(conversation=conversation).order_by("id"))
    notes = [e.data for e in events if e.name == "tool_progress"]
    assert [(n["progress"], n["total"], n["message"]) for n in notes] == [
        (1, 3, "Counted 1 of 3"),
        (2, 3, "Counted 2 of 3"),
        (3, 3, "Counted 3 of 3"),
    ]
    assert {n["tool_call_id"] for n in notes} == {call.tool_call_id}
    names = [e.name for e in events]
    # announced before its notes, and its result after them
    assert names.index("tool_call") < names.index("tool_progress")
    assert max(i for i, n in enumerate(names) if n == "tool_progress") < names.index("tool_result")
