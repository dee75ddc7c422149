"""Issue 33's interop suite: stock TypeScript-SDK servers, written as the SDKs' docs show
and unpatched — v1 (`@modelcontextprotocol/sdk`, 2025-11-25, a session per client) and v2
(`@modelcontextprotocol/server`, 2026-07-28 with its stateless 2025 fallback) — registered
as MCP servers and driven end to end: a form the person answers, declines or cancels, a
link (URL mode), -32042, progress notifications and structured output."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from chat.mcphost import health
from chat.mcphost.models import McpServer
from chat.mcphost.records import McpCall
from questionnaires.models import Elicitation
from tests.support.mcp_flow import answer, finished, page, pending, text_of, tool_result
from tests.support.mcp_servers import TS_SERVER, TS_SERVER_V2, ts_server, ts_server_missing

pytestmark = pytest.mark.django_db(transaction=True)

SDKS = {"v1": (TS_SERVER, "2025-11-25"), "v2": (TS_SERVER_V2, "2026-07-28")}


@pytest.fixture(scope="module", params=sorted(SDKS))
def ts(request) -> Iterator[tuple[str, str, str]]:
    """(major, URL, the revision the host speaks to it) for each stock TS server."""
    folder, revision = SDKS[request.param]
    if (reason := ts_server_missing(Path(folder))) is not None:
        pytest.skip(reason)
    with ts_server(folder=folder) as url:
        yield request.param, url, revision


@pytest.mark.parametrize(
    ("action", "fields", "said"),
    [
        ("accept", {"size": "4", "seating": "outdoor"}, "booked 4 outdoor"),
        ("decline", {}, "not booked: decline"),
        ("cancel", {}, "not booked: cancel"),
    ],
)
def test_a_form_reaches_the_person_and_their_answer_the_tool(
    run_tool, ts, client_in, action, fields, said
):
    _, url, revision = ts
    conversation = run_tool("book", url)
    row = pending(conversation)
    assert row.mode == "form"
    assert row.requested_schema["properties"]["size"]["type"] == "integer"
    assert answer(client_in, row, action, **fields).status_code == 302
    finished(conversation)
    assert text_of(tool_result(conversation)) == said
    assert {c.revision for c in McpCall.objects.all()} == {revision}


def test_a_link_opens_and_the_tool_hears_it(run_tool, ts, client_in):
    major, url, _ = ts
    tool = "login" if major == "v1" else "authorize"  # v2's URL mode is an input request
    conversation = run_tool(tool, url)
    row = pending(conversation)
    assert row.mode == "url" and row.url.startswith("https://example.test/")
    assert 'target="_blank"' in page(client_in, conversation)  # the Open button
    opened = answer(client_in, row, "accept")
    assert f'content="0;url={row.url}"' in opened.content.decode()
    finished(conversation)
    assert text_of(tool_result(conversation)) == f"{tool}: accept"


def test_url_required_leaves_an_open_link_card(run_tool, ts, client_in):
    """-32042 (a 2025-era error: v2 throws it on its 2025 leg, where the host's memory
    of the tool sends the call) ends the call; the link card stays open with Open."""
    major, url, _ = ts
    if major == "v2":
        server = McpServer.objects.create(name="srv", url=url, agents=["scripted"])
        health.mark_needs_back_channel(server.pk, "authorize")
    conversation = run_tool("authorize", url)
    finished(conversation)
    result = tool_result(conversation)
    assert result["error_code"] == "MCP_URL_ELICITATION_REQUIRED"
    row = Elicitation.objects.get(conversation=conversation)
    assert (row.mode, row.status, row.url) == ("url", "pending", "https://example.test/authorize")
    html = page(client_in, conversation)
    assert f'id="elic-{row.pk}"' in html and 'target="_blank"' in html
    assert "stopped waiting" not in html


def test_structured_output_and_progress_reach_the_chat(run_tool, ts, settings):
    """A tool with an outputSchema: the model gets its structuredContent as sent. The
    host asks for progress, so the server's notes become the conversation's
    `tool_progress` events (shown on the call's line in the page), in order."""
    from chat.core.models import Event

    settings.MCP_PROGRESS_INTERVAL = 0  # every note (the throttle has its own test)
    _, url, _ = ts
    conversation = run_tool("count", url, {"n": 3})
    finished(conversation)
    result = tool_result(conversation)
    assert result["success"] is True
    assert result["structured_content"] == {"counted": 3, "notified": 3}
    notes = Event.objects.filter(conversation=conversation, name="tool_progress")
    assert [
        (e.data["progress"], e.data["total"], e.data["message"]) for e in notes.order_by("id")
    ] == [
        (1, 3, "1 of 3"),
        (2, 3, "2 of 3"),
        (3, 3, "3 of 3"),
    ]


def test_progress_notes_reach_a_python_sdk_client(ts):
    """The host's own client library (the Python SDK) against each stock TS server:
    asked with a progress token, the server's notes arrive in order before the result,
    and structuredContent matches the tool's outputSchema (the SDK validates it)."""
    import anyio
    from mcp import Client

    _, url, revision = ts
    notes: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append((progress, total, message))

    async def call() -> tuple[str, object]:
        async with Client(url) as client:
            result = await client.call_tool("count", {"n": 3}, progress_callback=on_progress)
            return client.protocol_version, result

    spoken, result = anyio.run(call)
    assert spoken == revision
    assert notes == [(1, 3, "1 of 3"), (2, 3, "2 of 3"), (3, 3, "3 of 3")]
    assert result.structured_content == {"counted": 3, "notified": 3}  # type: ignore[attr-defined]
