"""Issue 34 item 7 (hostile input, round 4): the revision switch the README promises —
"a server spoken to in 2026-07-28 whose tool asks the old way is detected on that call:
it is spoken to in 2025-11-25 through the host from then on, and the call is made again
there" — happens for a stock dual-revision SDK server, is remembered per tool so every
other way its tools ask keeps working, and can't be turned into a loop by a server that
claims it needs a back-channel whatever revision it is spoken to in."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import NoBackChannelError

from chat.mcphost.records import McpCall, McpServerState
from questionnaires.models import Elicitation
from tests.support.mcp_flow import answer, finished, pending, text_of, tool_result
from tests.support.mcp_servers import serve

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_promised_switch_happens_for_a_dual_revision_server(run_tool, stock_url, client_in):
    conversation = run_tool("book", stock_url)
    row = pending(conversation)  # before the fix: no card, MCP_PROTOCOL_ERROR every time
    assert answer(client_in, row, "accept", size="6").status_code == 302
    finished(conversation)
    assert text_of(tool_result(conversation)) == "booked 6 indoor"
    (call,) = McpCall.objects.all()
    assert (call.revision, call.state) == ("2025-11-25", "done")
    assert McpServerState.objects.get().legacy_tools == ["book"]


def test_after_the_switch_every_way_of_asking_still_reaches_the_person(
    run_tool, stock_url, client_in
):
    first = run_tool("book", stock_url)
    assert answer(client_in, pending(first), "cancel").status_code == 302
    finished(first)
    # Resolve(Elicit…) of the same server still asks in 2026-07-28 rounds
    second = run_tool("reserve", stock_url)
    row = pending(second)
    assert row.input_key and not row.session_ref  # an input request, no session held
    assert answer(client_in, row, "accept", size="2", seating="outdoor").status_code == 302
    finished(second)
    assert text_of(tool_result(second)) == "reserved 2 outdoor"
    # ctx.elicit_url: switched on its own first call
    third = run_tool("login", stock_url)
    link = pending(third)
    assert link.mode == "url" and link.session_ref
    assert answer(client_in, link, "decline").status_code == 302
    finished(third)
    assert text_of(tool_result(third)) == "login: decline"
    # and a tool that builds its own InputRequiredResult, which only 2026-07-28 carries:
    # the switch is remembered per tool, not for the whole server
    fourth = run_tool("confirm", stock_url)
    row = pending(fourth)
    assert row.input_key == "ok"
    assert answer(client_in, row, "accept", ok="true").status_code == 302
    finished(fourth)
    assert text_of(tool_result(fourth)) == "confirm: accept {'ok': True}"
    assert McpServerState.objects.get().legacy_tools == ["book", "login"]


def _liar() -> MCPServer:
    """Says it has no back-channel in every revision (a hostile or broken server)."""
    server = MCPServer("liar")

    @server.tool()
    async def ask() -> str:
        """Claims to need a back-channel, always."""
        raise NoBackChannelError("elicitation/create")

    return server


def test_a_server_that_always_claims_no_back_channel_fails_once_visibly(run_tool):
    with serve(_liar()) as url:
        conversation = run_tool("ask", url)
        finished(conversation)
    result = tool_result(conversation)
    assert result["success"] is False and result["error_code"] == "MCP_PROTOCOL_ERROR"
    assert "back-channel" in result["message"]
    (call,) = McpCall.objects.all()  # switched once, made once more there, then done
    assert (call.state, call.revision) == ("done", "2025-11-25")
    assert not Elicitation.objects.exists()
