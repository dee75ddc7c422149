"""Issue 21: waiting for a person holds no worker. Suspended runs resumed by answers, the
session host's calls (and its death), the limits, and the circuit breaker — against real
SDK servers on loopback (2025-11-25 through the session host, 2026-07-28 by rounds)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from django.urls import reverse

from chat.core.models import Event, Role, Wait
from chat.mcphost import host
from chat.mcphost.hosted import calls_interrupt_stale
from chat.mcphost.records import McpCall, McpHostLease, McpServerState
from questionnaires.models import Elicitation
from tests.support.mcp_flow import answer, finished, pending, suspended, tool_result

pytestmark = pytest.mark.django_db(transaction=True)


# --- 2025-11-25: the session host ---------------------------------------------------------


def test_a_legacy_call_suspends_the_run_and_the_host_resumes_it(
    run_tool, server_url, client_in, settings
):
    settings.MCP_HOST_GRACE_SECONDS = 0
    conversation = run_tool("book", server_url)
    row = pending(conversation)
    run = suspended(conversation)
    (call,) = McpCall.objects.all()
    assert (call.state, call.revision) == ("hosted", "2025-11-25") and call.host
    assert {w.kind for w in Wait.objects.filter(status="open")} == {"mcp_call", "elicitation"}
    assert answer(client_in, row, "accept", size="5", seating="outdoor").status_code == 302
    finished(conversation)
    assert tool_result(conversation)["content"][0]["text"] == "booked 5 outdoor"
    run.refresh_from_db()
    assert run.attempts == 2 and not Wait.objects.filter(status="open").exists()


def test_a_waiting_call_ends_from_its_row_even_when_its_server_is_left_out(
    run_tool, server_url, client_in, settings
):
    """The breaker opened (or the listing changed) while the person answered: the
    resumed attempt still picks the call up from its row, it is not an unknown tool."""
    from django.utils import timezone

    settings.MCP_HOST_GRACE_SECONDS = 0
    conversation = run_tool("book", server_url)
    row = pending(conversation)
    suspended(conversation)
    McpServerState.objects.update(open_until=timezone.now() + timezone.timedelta(hours=1))
    assert answer(client_in, row, "accept", size="2").status_code == 302
    finished(conversation)
    assert tool_result(conversation)["content"][0]["text"] == "booked 2 indoor"


def test_a_call_that_asks_nobody_finishes_in_the_same_attempt(run_tool, server_url):
    conversation = run_tool("add", server_url, {"a": 2, "b": 3})
    run = finished(conversation)
    assert run.attempts == 1  # within the grace: never suspended
    assert tool_result(conversation)["content"][0]["text"] == "5"


def test_stopping_the_host_ends_its_calls_visibly(run_tool, server_url, client_in):
    conversation = run_tool("book", server_url)
    row = pending(conversation)
    host.host_thread_stop()
    finished(conversation)
    result = tool_result(conversation)
    assert result["success"] is False and result["error_code"] == "MCP_HOST_INTERRUPTED"
    row.refresh_from_db()
    assert (row.status, row.refused_code) == ("abandoned", "host_interrupted")
    assert "interrupted" in row.refused_reason
    url = reverse("chat:message_send", args=[conversation.pk])
    assert client_in.post(url, {"content": "and now?"}).status_code == 302  # typing is free


def test_a_dead_hosts_calls_are_interrupted_by_the_reaper(run_tool, server_url, settings):
    """A host process killed with SIGKILL leaves its lease to go stale: its calls end."""
    conversation = run_tool("book", server_url)
    pending(conversation)
    McpCall.objects.update(host="gone-host:1")  # held by a host that no longer beats
    McpHostLease.objects.create(host="gone-host:1", heartbeat_at="2020-01-01T00:00Z")
    assert calls_interrupt_stale() == [McpCall.objects.get().pk]
    finished(conversation)
    assert tool_result(conversation)["error_code"] == "MCP_HOST_INTERRUPTED"
    assert not McpHostLease.objects.filter(host="gone-host:1").exists()


def test_a_server_that_stops_waiting_says_so_on_the_card(run_tool, client_in, settings):
    """A server whose own request timeout ends the question (the TypeScript SDK's 60 s):
    the card says the server stopped waiting, in the conversation's language."""
    from tests.support.mcp_servers import impatient_server, serve

    with serve(impatient_server()) as url:
        conversation = run_tool("ask", url)
        row = pending(conversation)
        finished(conversation)
    row.refresh_from_db()
    assert (row.status, row.refused_code) == ("abandoned", "server_stopped_waiting")
    assert row.refused_reason == "srv stopped waiting for your answer."


# --- a TypeScript-SDK server (2025-11-25, the SDK's own 60 s request timeout) ------------


@pytest.fixture
def ts_url():
    from tests.support.mcp_servers import ts_server, ts_server_missing

    if (reason := ts_server_missing()) is not None:
        pytest.skip(reason)
    with ts_server() as url:
        yield url


def test_a_typescript_sdk_server_asks_through_the_host(run_tool, ts_url, client_in, settings):
    settings.MCP_HOST_GRACE_SECONDS = 0
    conversation = run_tool("book", ts_url)
    row = pending(conversation)
    assert row.requested_schema["properties"]["size"]["type"] == "integer"
    suspended(conversation)
    assert answer(client_in, row, "accept", size="5", seating="outdoor").status_code == 302
    finished(conversation)
    assert tool_result(conversation)["content"][0]["text"] == "booked 5 outdoor"


def test_a_typescript_sdk_server_that_stops_waiting(run_tool, settings):
    from tests.support.mcp_servers import ts_server, ts_server_missing

    if (reason := ts_server_missing()) is not None:
        pytest.skip(reason)
    with ts_server(patience_ms=2000) as url:
        conversation = run_tool("book", url)
        row = pending(conversation)
        finished(conversation)
    assert tool_result(conversation)["content"][0]["text"].startswith("gave up waiting")
    row.refresh_from_db()
    assert (row.status, row.refused_code) == ("abandoned", "server_stopped_waiting")
    assert row.refused_reason == "srv stopped waiting for your answer."


# --- 2026-07-28: rounds, and the limits ---------------------------------------------------


def test_a_round_with_more_questions_than_a_call_may_ask(run_tool, modern_url, client_in):
    conversation = run_tool("survey", modern_url, {"questions": 4})
    suspended(conversation)
    cards = list(Elicitation.objects.filter(conversation=conversation).order_by("id"))
    assert [c.status for c in cards] == ["pending"] * 3 + ["refused"]
    assert cards[3].refused_code == "wait_limit_call"
    assert "at most 3 questions" in cards[3].refused_reason
    for card in cards[:3]:
        assert answer(client_in, card, "accept", size="1").status_code == 302
    finished(conversation)
    text = tool_result(conversation)["content"][0]["text"]
    assert text == "answers: accept,accept,accept,cancel"  # the 4th was never shown


def test_the_per_user_limit_refuses_a_card_visibly_and_loses_nothing(
    run_tool, modern_url, settings, user
):
    settings.WAITS_PER_USER = 1
    first = run_tool("book", modern_url)
    suspended(first)
    second = run_tool("book", modern_url, owner=user)
    finished(second)
    refused = Elicitation.objects.get(conversation=second)
    assert (refused.status, refused.refused_code) == ("refused", "wait_limit_user")
    assert tool_result(second)["content"][0]["text"] == "not booked: cancel"
    assert Elicitation.objects.get(conversation=first).status == "pending"


# --- the circuit breaker --------------------------------------------------------------


@contextlib.contextmanager
def hung_server() -> Iterator[str]:
    """Accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


def test_a_hung_server_costs_one_timeout_not_one_per_turn(run_tool, settings):
    settings.MCP_TOOL_TIMEOUT = 1.5
    with hung_server() as url:
        first = run_tool("add", url)
        finished(first)
        state = McpServerState.objects.get()
        assert state.failures == 1 and state.open_until is not None
        assert state.last_error.startswith("MCP_TIMEOUT")
        started = time.monotonic()
        second = run_tool("add", url)
        finished(second)
        assert time.monotonic() - started < 1.5  # no second timeout
    notes = [
        e.data
        for e in Event.objects.filter(conversation=second, name="tool_result")
        if e.data["name"] == "srv__*"
    ]
    assert notes and notes[0]["result"]["error_code"] == "MCP_CIRCUIT_OPEN"
    # the model's context said why the tools are missing
    assert second.messages.filter(role=Role.ASSISTANT, content="Done.").exists()
