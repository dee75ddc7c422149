"""Issue 33's interop suite in a real browser, once per TypeScript-SDK major: a stock v1
server (2025-11-25, through the session host) and a stock v2 server (2026-07-28, its form
an input request) registered as the chat's MCP server — the person answers the form card,
then opens the link card a -32042 leaves (v2 throws it on its 2025 leg, where the host's
memory of the tool sends that call)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.mcp_servers import TS_SERVER, TS_SERVER_V2, ts_server, ts_server_missing

from .conftest import new_conversation
from .test_stock_mcp import TIMEOUT, send


@pytest.mark.parametrize("folder", [TS_SERVER, TS_SERVER_V2], ids=["v1", "v2"])
def test_a_stock_ts_sdk_servers_questions_reach_the_person(page, server, context, folder):
    if (reason := ts_server_missing(folder)) is not None:
        pytest.skip(reason)
    with ts_server(folder=folder) as url:
        server.json(
            "from chat.mcphost import health\n"
            "from chat.mcphost.models import McpServer\n"
            f"s = McpServer.objects.create(name='srv', url={url!r}, agents=['scripted'])\n"
            "health.mark_needs_back_channel(s.pk, 'authorize')\n"
            "print(1)"
        )
        try:
            _walk(page, server, context)
        finally:  # the live server is shared: no other test may see this server
            server.json(
                "from chat.mcphost.models import McpServer\n"
                "McpServer.objects.filter(name='srv').delete()\nprint(1)"
            )


def _walk(page, server, context) -> None:
    new_conversation(page, server, agent="scripted", title="Stock TS MCP", script="mcp_stock")
    send(page, "A table, please")
    card = page.locator("#messages section.elic").last
    expect(card).to_have_class(re.compile(r"\belic-pending\b"), timeout=TIMEOUT)
    expect(card.locator(".qcard-source")).to_have_text("srv · MCP")
    card.get_by_label("How many?").fill("3")
    card.get_by_role("button", name="Send", exact=True).click()
    expect(card).to_have_class(re.compile(r"\belic-accepted\b"), timeout=TIMEOUT)
    expect(page.locator("#messages")).to_contain_text("Booked.", timeout=TIMEOUT)
    expect(page.locator("#run-status .run-active")).to_have_count(0, timeout=TIMEOUT)

    context.route(
        "https://example.test/authorize", lambda route: route.fulfill(body="signed", status=200)
    )
    send(page, "My files")
    expect(page.locator("#messages")).to_contain_text(
        "Open the link above, then tell me when you are done.", timeout=TIMEOUT
    )
    expect(page.locator("#run-status .run-active")).to_have_count(0, timeout=TIMEOUT)
    link = page.locator("#messages section.elic").last
    expect(link).to_have_class(re.compile(r"\belic-pending\b"))
    expect(link.locator(".elic-host")).to_have_text("example.test")
    with page.expect_popup() as popup_info:
        link.get_by_role("button", name="Open").click()
    popup = popup_info.value
    popup.wait_for_url("https://example.test/authorize", timeout=TIMEOUT)
    popup.close()
    expect(page.locator("#messages section.elic").last).to_contain_text(
        "Completed.", timeout=TIMEOUT
    )
