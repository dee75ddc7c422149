"""Issue 33 items 1 and 2 in a real browser, against a stock Python-SDK server (an
unpatched `MCPServer` speaking both revisions, on loopback): its `ctx.elicit` reaches the
person as a card they answer, and a -32042 link card stays open with its Open button
after the call has returned."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from playwright.sync_api import expect

from tests.support.mcp_servers import make_stock_server, serve

from .conftest import new_conversation

TIMEOUT = 30_000  # generous: a busy CI box delivers live updates late; only a failure waits


def send(page, text: str) -> None:
    page.fill("#id_content", text)
    page.click("#composer button[type=submit]")


def test_a_stock_sdk_servers_questions_reach_the_person(page, server, context):
    with serve(make_stock_server()) as url:
        # `authorize` (-32042) is called through the session host, as every call to a
        # 2025-11-25 server is: where the link card used to close as the call ended.
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
    new_conversation(page, server, agent="scripted", title="Stock MCP", script="mcp_stock")
    send(page, "A table, please")
    card = page.locator("#messages section.elic").last
    expect(card).to_have_class(re.compile(r"\belic-pending\b"), timeout=TIMEOUT)
    expect(card.locator(".qcard-source")).to_have_text("srv · MCP")
    card.get_by_label("Size").fill("4")
    card.get_by_role("button", name="Send", exact=True).click()
    expect(card).to_have_class(re.compile(r"\belic-accepted\b"), timeout=TIMEOUT)
    expect(card.locator(".elic-outcome")).to_contain_text("booked 4 indoor", timeout=TIMEOUT)
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
    # the turn is over and the card is still open, with Open (it closed in 26 ms before)
    expect(link).to_have_class(re.compile(r"\belic-pending\b"))
    expect(link).not_to_contain_text("stopped waiting")
    expect(link.locator(".elic-host")).to_have_text("example.test")
    with page.expect_popup() as popup_info:
        link.get_by_role("button", name="Open").click()
    popup = popup_info.value
    popup.wait_for_url("https://example.test/authorize", timeout=TIMEOUT)
    popup.close()
    expect(page.locator("#messages section.elic").last).to_contain_text(
        "Completed.", timeout=TIMEOUT
    )


def test_a_stock_sdk_servers_progress_shows_on_its_call_while_it_runs(page, server, context):
    """`ctx.report_progress` during a call: its line in the live run gets a bar and the
    server's words as the notes arrive (over SSE, throttled), and goes with the result."""
    gate = threading.Event()  # the server holds its last step until the test has looked
    with serve(make_stock_server(gate)) as url:
        server.json(
            "from chat.mcphost.models import McpServer\n"
            f"McpServer.objects.create(name='srv', url={url!r}, agents=['scripted'])\nprint(1)"
        )
        try:
            new_conversation(
                page, server, agent="scripted", title="Progress", script="mcp_progress"
            )
            send(page, "Count to three")
            line = page.locator("#run-live .run-tools li").last
            expect(line.locator(".run-tool-progress-text")).to_have_text(
                "2 of 3 · Counted 2 of 3", timeout=TIMEOUT
            )
            bar = line.locator("progress")
            expect(bar).to_have_attribute("max", "3")
            expect(bar).to_have_js_property("value", 2)
            if os.environ.get("E2E_SHOTS"):
                _shots(page, Path(os.environ["E2E_SHOTS"]))
            gate.set()
            expect(page.locator("#messages")).to_contain_text("Counted.", timeout=TIMEOUT)
            expect(page.locator("#run-live .run-tool-progress")).to_have_count(0)
            expect(page.locator("#run-status .run-active")).to_have_count(0, timeout=TIMEOUT)
        finally:  # the live server is shared: no other test may see this server
            gate.set()
            server.json(
                "from chat.mcphost.models import McpServer\n"
                "McpServer.objects.filter(name='srv').delete()\nprint(1)"
            )


def _shots(page, out: Path) -> None:
    """Screenshots of the progress line for review (E2E_SHOTS=folder)."""
    out.mkdir(parents=True, exist_ok=True)
    for width, height in ((1280, 800), (360, 740)):
        page.set_viewport_size({"width": width, "height": height})
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            page.locator("#run-live").scroll_into_view_if_needed()
            page.screenshot(path=str(out / f"progress-{width}-{scheme}.png"))
