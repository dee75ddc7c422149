"""Issue 33 item 1: a stock Python-SDK server — `MCPServer` unpatched, speaking 2026-07-28
and 2025-11-25 both — asks a person whichever way its tool asks: `ctx.elicit` (form),
`ctx.elicit_url`, `Resolve(Elicit…)` and -32042. End to end: the host, the card, the
person's answer through its view, the tool result the model gets."""

from __future__ import annotations

import logging

import pytest

from chat.mcphost import health
from chat.mcphost.models import McpServer
from chat.mcphost.records import McpCall, McpServerState
from questionnaires.models import Elicitation
from tests.support import wait_for
from tests.support.mcp_flow import (
    answer,
    finished,
    page,
    pending,
    suspended,
    text_of,
    tool_result,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_ctx_elicit_on_a_dual_revision_server_asks_the_person(run_tool, stock_url, client_in):
    conversation = run_tool("book", stock_url)
    row = pending(conversation)
    assert row.requested_schema["properties"]["size"]["type"] == "integer"
    suspended(conversation)
    assert answer(client_in, row, "accept", size="4", seating="outdoor").status_code == 302
    finished(conversation)
    assert text_of(tool_result(conversation)) == "booked 4 outdoor"
    (call,) = McpCall.objects.all()
    assert call.revision == "2025-11-25"  # the host spoke the revision asks work in
    state = McpServerState.objects.get()
    assert state.legacy_tools == ["book"]  # remembered for the tool's next calls


def test_the_next_call_goes_straight_to_the_revision_that_asks(
    run_tool, stock_url, client_in, caplog
):
    """The server row's health remembers it: the second call is not tried in 2026 first."""
    first = run_tool("book", stock_url)
    assert answer(client_in, pending(first), "decline").status_code == 302
    finished(first)
    assert text_of(tool_result(first)) == "not booked: decline"
    second = run_tool("book", stock_url)
    row = pending(second)
    assert answer(client_in, row, "accept", size="2").status_code == 302
    finished(second)
    assert text_of(tool_result(second)) == "booked 2 indoor"
    switched = [r.getMessage() for r in caplog.records if "back-channel" in r.getMessage()]
    # one line, for the first call only; no warning, no traceback: it is expected
    assert switched == [
        "MCP server srv: tool book asks over a back-channel; its calls use 2025-11-25"
    ]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert [c.revision for c in McpCall.objects.order_by("id")] == ["2025-11-25"] * 2


def test_ctx_elicit_url_shows_an_open_button_and_completes(run_tool, stock_url, client_in):
    conversation = run_tool("login", stock_url)
    row = pending(conversation)
    assert (row.mode, row.url) == ("url", "https://example.test/sign-in")
    assert 'target="_blank"' in page(client_in, conversation)  # the Open button
    opened = answer(client_in, row, "accept")
    assert 'content="0;url=https://example.test/sign-in"' in opened.content.decode()
    finished(conversation)
    assert text_of(tool_result(conversation)) == "login: accept"
    wait_for(
        lambda: Elicitation.objects.filter(pk=row.pk, status="completed").exists(),
        "the server's completion notice",
    )


def test_resolve_elicit_asks_in_2026_rounds(run_tool, stock_url, client_in):
    conversation = run_tool("reserve", stock_url)
    row = pending(conversation)
    assert row.input_key  # an input request of a 2026-07-28 round, no session held
    suspended(conversation)
    assert answer(client_in, row, "accept", size="3").status_code == 302
    finished(conversation)
    assert text_of(tool_result(conversation)) == "reserved 3 indoor"
    assert McpCall.objects.get().revision == "2026-07-28"


def test_a_plain_tool_of_a_dual_revision_server_is_called_in_2026(run_tool, stock_url):
    conversation = run_tool("add", stock_url, {"a": 2, "b": 5})
    finished(conversation)
    assert text_of(tool_result(conversation)) == "7"
    assert McpServerState.objects.get().revision == "2026-07-28"
    assert not Elicitation.objects.exists()


# --- issue 33 item 2: a -32042 link stays open until the person acts ---------------------


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
def test_a_url_required_link_stays_open_with_its_open_button(
    run_tool, stock_url, client_in, revision
):
    """-32042 ends the call at once; its link card must not end with it (it did, 26 ms
    after it appeared, through the session host: "stopped waiting", no Open button)."""
    if revision == "2025-11-25":  # the server's health says its tools ask the old way
        server = McpServer.objects.create(name="srv", url=stock_url, agents=["scripted"])
        health.mark_needs_back_channel(server.pk, "authorize")
    conversation = run_tool("authorize", stock_url)
    finished(conversation)
    result = tool_result(conversation)
    assert result["error_code"] == "MCP_URL_ELICITATION_REQUIRED"
    assert "at a link shown in the chat" in result["message"]
    assert (McpCall.objects.get().state, McpCall.objects.get().host != "") == (
        "done",
        revision == "2025-11-25",  # made by the session host
    )
    row = Elicitation.objects.get(conversation=conversation)
    assert (row.mode, row.status, row.url) == ("url", "pending", "https://example.test/authorize")
    html = page(client_in, conversation)
    assert f'id="elic-{row.pk}"' in html and 'target="_blank"' in html  # Open
    assert "stopped waiting" not in html
    opened = answer(client_in, row, "accept")
    assert 'content="0;url=https://example.test/authorize"' in opened.content.decode()
    row.refresh_from_db()
    assert row.status == "completed"  # nobody waits on it: opening it is the step


# --- issue 33 item 6: a link the chat refuses is not the person's decline ---------------


def test_a_refused_plain_http_link_is_no_decline_in_2026(run_tool, stock_url, client_in):
    conversation = run_tool("plain_link", stock_url)
    finished(conversation)
    row = Elicitation.objects.get(conversation=conversation)
    assert (row.status, row.refused_code) == ("refused", "elicitation_url_invalid")
    text = text_of(tool_result(conversation))
    assert text.startswith("plain link: cancel ")  # the person did nothing
    assert "elicitation_url_invalid" in text  # and the server hears why
    html = page(client_in, conversation)
    assert "only https links are opened" in html  # the card says why
    assert 'target="_blank"' not in html  # and offers no Open


def test_a_refused_plain_http_link_is_an_error_in_2025(run_tool, stock_url, client_in):
    conversation = run_tool("plain_login", stock_url)
    finished(conversation)
    row = Elicitation.objects.get(conversation=conversation)
    assert (row.status, row.refused_code) == ("refused", "elicitation_url_invalid")
    result = tool_result(conversation)
    assert result["success"] is False  # -32602 from the chat: the tool did not hear "decline"
    assert "only https links are opened" in result["message"]
    assert "only https links are opened" in page(client_in, conversation)
