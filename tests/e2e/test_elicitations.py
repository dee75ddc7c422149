"""MCP elicitation cards in a real browser, served by the bundled demo MCP server (the
chat/0007 migration registers it, so no extra process): a form answered with and without
JavaScript, and URL mode's Open in a new tab."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from chat.mcphost.demo import INFO_URL

from .conftest import login, new_conversation

TIMEOUT = 30_000  # generous: a busy CI box delivers live updates late; only a failure waits


def mcp_demo_conversation(page, server, title: str) -> int:
    """A scripted conversation on the MCP walk-through (chat/agent/scripts/mcp_demo)."""
    return new_conversation(page, server, agent="scripted", title=title, script="mcp_demo")


def send(page, text: str) -> None:
    page.fill("#id_content", text)
    page.click("#composer button[type=submit]")


def fill_reservation(card) -> None:
    card.get_by_label("Date").fill("2026-05-01")
    card.get_by_label("Party Size").fill("3")
    card.get_by_label("terrace").check()
    card.get_by_label("vegan").check()


def test_a_form_elicitation_answered_in_the_chat(page, server):
    mcp_demo_conversation(page, server, "MCP form")
    send(page, "A table, please")
    card = page.locator("#messages section.elic").last
    expect(card).to_have_class(re.compile(r"\belic-pending\b"), timeout=TIMEOUT)
    expect(card.locator(".qcard-source")).to_have_text("demo · MCP")
    expect(card.locator(".qcard-title")).to_have_text("Reserve a table at Chez MCP")
    expect(card.get_by_label("Terrace")).to_be_visible()  # enum values read as words
    # Bug 3: the text that introduces the question comes before its card, live.
    intro = page.locator("#messages article", has_text="Let me reserve a table for you.")
    order = page.evaluate(
        """() => { const arts = [...document.querySelectorAll('#messages > article')];
        const intro = arts.findIndex(a => a.textContent.includes('Let me reserve a table'));
        const card = arts.findIndex(a => a.querySelector('section.elic'));
        return [intro, card]; }"""
    )
    expect(intro).to_have_count(1)
    assert order[0] != -1 and order[0] <= order[1], order
    # While the server waits, typed text is refused with the reason.
    expect(page.locator("#composer")).to_be_visible()
    fill_reservation(card)
    card.get_by_role("button", name="Send", exact=True).click()
    expect(card).to_have_class(re.compile(r"\belic-accepted\b"), timeout=TIMEOUT)
    expect(card).to_have_attribute("data-state", "answered")
    # Folded to its title and "Answered"; the answer once, on one line (no user turn has it)
    expect(card.locator(".qcard-chip")).to_have_text("Answered")
    expect(card.locator(".qcard-summary")).to_have_text(  # each value labelled (issue 32)
        "Date: 2026-05-01 · Party Size: 3 · Seating: Terrace · Dietary: Vegan · Newsletter: No"
    )
    expect(card.locator(".qcard-answers")).to_be_hidden()
    card.locator("summary.qcard-head").click()
    expect(card.locator(".qcard-answers")).to_contain_text("2026-05-01")
    expect(card.locator("button")).to_have_count(0)
    # The tool's result arrives on the locked card, then the model's reply; the card the
    # person opened stays open through that live update.
    expect(card.locator(".elic-outcome")).to_contain_text(
        "for 3 on 2026-05-01 (terrace); dietary needs: vegan", timeout=TIMEOUT
    )
    expect(page.locator("#messages")).to_contain_text("Done: your table is reserved.")
    expect(card.locator(".qcard-answers")).to_be_visible()
    expect(card.locator(".qcard-summary")).to_be_hidden()


def test_a_url_elicitation_opens_a_new_tab(page, server, context):
    context.route(INFO_URL, lambda route: route.fulfill(body="the demo page", status=200))
    mcp_demo_conversation(page, server, "MCP url")
    send(page, "A table, please")
    first = page.locator("#messages section.elic").last
    expect(first).to_have_class(re.compile(r"\belic-pending\b"), timeout=TIMEOUT)
    # Decline is a rare action: behind "Other choices", with what it means
    first.get_by_text("Other choices").click()
    expect(first.get_by_text("Say no: the server is told you won’t answer.")).to_be_visible()
    first.get_by_role("button", name="Decline").click()
    expect(first).to_contain_text("You declined.", timeout=TIMEOUT)
    expect(first.locator(".elic-outcome")).to_contain_text("chose decline", timeout=TIMEOUT)
    expect(page.locator("#run-status .run-active")).to_have_count(0, timeout=TIMEOUT)

    send(page, "Verify my email")
    card = page.locator("#messages section.elic-url, #messages section.elic").last
    expect(card.get_by_role("button", name="Open")).to_be_visible(timeout=TIMEOUT)
    expect(card.locator(".elic-host")).to_have_text("modelcontextprotocol.io")
    with page.expect_popup() as popup_info:
        card.get_by_role("button", name="Open").click()
    popup = popup_info.value
    # The new tab records the accept, then goes on to the server's link (routed here: no
    # network). Nothing in it may trip the CSP either.
    popup.wait_for_url(INFO_URL, timeout=TIMEOUT)
    expect(popup.locator("body")).to_have_text("the demo page")
    popup.close()
    card = page.locator("#messages section.elic").last
    expect(card).to_contain_text("Completed.", timeout=TIMEOUT)
    expect(card.locator(".elic-outcome")).to_contain_text(
        "ann@example.test is verified.", timeout=TIMEOUT
    )
    expect(page.locator("#messages")).to_contain_text("Thanks, that step is finished.")


def test_a_form_elicitation_without_javascript(browser, server):
    ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    page = ctx.new_page()
    login(page, server)
    cid = mcp_demo_conversation(page, server, "MCP no js")
    send(page, "A table, please")
    page.wait_for_url(f"**/conversations/{cid}/*")
    # The page reloads itself while the turn runs, and stops once the card waits.
    card = page.locator("#messages section.elic-pending")
    expect(card).to_have_count(1, timeout=TIMEOUT)
    assert page.locator('meta[http-equiv="refresh"]').count() == 0
    # (The browser's own checks hold back a party of 40: max is 12. A refusal by the
    # server without JS is a view test.)
    fill_reservation(card)
    card.get_by_role("button", name="Send", exact=True).click()
    page.wait_for_url(f"**/conversations/{cid}/*")
    expect(page.locator("#messages section.elic-accepted")).to_have_count(1)
    # The turn goes on after the answer: the page follows it until the reply is there.
    expect(page.locator("#messages")).to_contain_text(
        "Done: your table is reserved.", timeout=TIMEOUT
    )
    expect(page.locator("#messages .elic-outcome")).to_contain_text("for 3 on 2026-05-01")
    ctx.close()


def test_an_expired_question_is_never_reported_as_done(page, server):
    """Bug 4: after a server's question expires, the reply doesn't claim success and the
    tool's "nothing was done" result isn't dressed as a success."""
    cid = mcp_demo_conversation(page, server, "MCP expired")
    send(page, "A table, please")
    card = page.locator("#messages section.elic").last
    expect(card).to_have_class(re.compile(r"\belic-pending\b"), timeout=TIMEOUT)
    server.shell(
        "from questionnaires.elicitations.models import Elicitation\n"
        "from questionnaires.elicitations.services import elicitations_expire_due\n"
        f"row = Elicitation.objects.filter(conversation_id={cid}, status='pending').last()\n"
        "elicitations_expire_due(ids=[row.pk])"
    )
    expect(card).to_have_attribute("data-state", "closed", timeout=TIMEOUT)
    expect(card.locator(".qcard-chip")).to_have_text("Expired")
    outcome = card.locator(".elic-outcome")
    expect(outcome).to_contain_text("No reservation made", timeout=TIMEOUT)
    expect(page.locator("#messages")).to_contain_text("No table was reserved", timeout=TIMEOUT)
    expect(page.locator("#messages")).not_to_contain_text("your table is reserved")
    edge, ok = outcome.evaluate(
        """e => { const t = document.createElement('span'); t.style.color = 'var(--ok)';
        document.body.append(t); const ok = getComputedStyle(t).color; t.remove();
        return [getComputedStyle(e).borderLeftColor, ok]; }"""
    )
    assert edge != ok, (edge, ok)  # neutral, not the success green
