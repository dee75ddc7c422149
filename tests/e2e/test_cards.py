"""Questionnaire cards in a real browser: answer, lock (in every tab), refuse, keyboard,
no JavaScript, and XSS payloads in every field."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.e2e.conftest import login, new_conversation
from tests.support.asking import TRIP


def post_assistant(server, cid: int, content: str) -> int:
    out = server.shell(
        "from chat.models import Conversation\n"
        "from chat.core.services import message_create\n"
        f"c = Conversation.objects.get(pk={cid})\n"
        f"print(message_create(conversation=c, role='assistant', content={content!r}).pk)"
    )
    return int(out.strip().splitlines()[-1])


def card(page, mid: int):
    return page.locator(f"#msg-{mid} .qcard")


def open_with_card(page, server, content: str = TRIP) -> tuple[int, int]:
    cid = new_conversation(page, server, title="Cards")
    mid = post_assistant(server, cid, content)
    page.reload()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "interactive")
    return cid, mid


def test_answer_single_multi_free_text_and_other(page, server):
    _cid, mid = open_with_card(page, server)
    c = card(page, mid)
    c.get_by_label("Other answer to: Where to?").fill("Oslo")  # typing selects "Other"
    expect(c.get_by_label("Other", exact=True)).to_be_checked()
    c.get_by_label("Plane").check()
    c.get_by_label("Train").uncheck()
    c.locator("textarea").fill("Window seat")
    c.get_by_role("button", name="Send", exact=True).click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    answer = page.locator(".msg-user .qanswer").last
    expect(answer).to_contain_text("Oslo")
    expect(answer).to_contain_text("Plane")
    expect(answer).to_contain_text("Window seat")
    expect(page.locator(".msg-user .qanswer")).to_have_count(1)  # appended once, not twice
    expect(page.locator("article.msg-assistant").last).to_contain_text(
        "Echo: <questionnaire-response>"
    )
    assert page.dialogs == []


def test_second_tab_locks_live(browser, page, server):
    cid, mid = open_with_card(page, server)
    other_ctx = browser.new_context(locale="en-US")
    other = other_ctx.new_page()
    login(other, server)
    other.goto(f"{server.url}/conversations/{cid}/")
    expect(card(other, mid)).to_have_attribute("data-card-mode", "interactive")
    other.wait_for_timeout(300)  # let the event stream connect
    card(page, mid).get_by_role("button", name="Send", exact=True).click()
    expect(card(other, mid)).to_have_attribute("data-card-mode", "answered")
    expect(other.locator(".msg-user .qanswer")).to_have_count(1)
    expect(other.locator("#qc-announcer")).to_contain_text("Questionnaire answered")
    other_ctx.close()


def test_new_card_arrives_live_and_older_card_locks(page, server):
    cid, first = open_with_card(page, server)
    page.wait_for_timeout(300)
    second = post_assistant(server, cid, TRIP.replace("Trip plan", "Second plan"))
    expect(card(page, second)).to_have_attribute("data-card-mode", "interactive")
    expect(card(page, first)).to_have_attribute("data-card-mode", "closed")
    expect(page.locator("#qc-announcer")).to_contain_text("New questionnaire: Second plan")


def test_older_card_is_refused_with_the_reason_and_selections_kept(page, server):
    page.route("**/events*", lambda route: route.abort())  # no live updates: the card goes stale
    cid, mid = open_with_card(page, server)
    post_assistant(server, cid, "Something newer")
    c = card(page, mid)
    c.get_by_label("Rome").check()
    c.locator("textarea").fill("keep me")
    c.get_by_role("button", name="Send", exact=True).click()
    alert = card(page, mid).get_by_role("alert")
    expect(alert).to_contain_text("no longer the latest")
    expect(alert).to_have_attribute("data-error-code", "questionnaire_not_latest")
    expect(card(page, mid).get_by_label("Rome")).to_be_checked()
    expect(card(page, mid).locator("textarea")).to_have_value("keep me")
    expect(page.locator(".msg-user")).to_have_count(0)


def test_keyboard_only(page, server):
    _cid, mid = open_with_card(page, server)
    c = card(page, mid)
    c.get_by_label("Paris").focus()
    page.keyboard.press("ArrowDown")  # native radio group: arrows move the choice
    expect(c.get_by_label("Rome")).to_be_checked()
    page.keyboard.press("Tab")  # -> Other's text box (radio group is one tab stop)
    page.keyboard.press("Tab")  # -> Skip this question
    page.keyboard.press("Tab")  # -> Train
    page.keyboard.press("Tab")  # -> Plane
    page.keyboard.press("Space")
    expect(c.get_by_label("Plane")).to_be_checked()
    page.keyboard.press("Tab")  # -> Car
    page.keyboard.press("Tab")  # -> Skip this question
    page.keyboard.press("Tab")  # -> textarea
    page.keyboard.type("by keyboard")
    page.keyboard.press("Tab")  # -> Skip this question
    page.keyboard.press("Tab")  # -> submit
    expect(c.get_by_role("button", name="Send", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    expect(page.locator(".msg-user .qanswer").last).to_contain_text("by keyboard")
    # Bug 8: focus goes where the next answer goes — no question is open, so the composer
    # (not the answered card's title), once cards.js has seen the swap settle.
    expect(page.locator("#id_content")).to_be_focused()
    expect(page.locator(".qcard-title:focus")).to_have_count(0)


def test_without_javascript(browser, server):
    ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    page = ctx.new_page()
    login(page, server)
    cid = new_conversation(page, server, title="no js cards")
    mid = post_assistant(server, cid, TRIP)
    page.reload()
    c = card(page, mid)
    c.get_by_label("Rome").check()
    c.get_by_label("Car").check()
    c.get_by_role("button", name="Send", exact=True).click()
    page.wait_for_url(f"**/conversations/{cid}/*")
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    expect(page.locator(".msg-user .qanswer")).to_contain_text("Rome")
    # answer_invalid without JS: the page comes back with the reason, nothing lost
    second = post_assistant(server, cid, TRIP)
    page.reload()
    c = card(page, second)
    c.get_by_label("Other", exact=True).check()
    c.locator("textarea").fill("kept")
    c.get_by_role("button", name="Send", exact=True).click()
    expect(card(page, second).locator(".qcard-field-error")).to_contain_text("Other")
    expect(card(page, second).locator("textarea")).to_have_value("kept")
    ctx.close()


XSS = "<img src=x onerror=alert('x')><script>alert('s')</script>"


def test_xss_payloads_in_every_field_never_execute(page, server):
    body = {
        "title": XSS + "title",
        "questions": [
            {
                "id": "a",
                "type": "single_choice",
                "text": XSS + "q",
                "options": [XSS + "opt", "ok"],
                "default": XSS + "opt",
                "allow_other": True,
            },
            {"id": "b", "type": "free_text", "text": XSS + "free", "default": XSS + "default"},
        ],
    }
    content = f"{XSS} intro\n<questionnaire>{json.dumps(body)}</questionnaire>"
    _cid, mid = open_with_card(page, server, content)
    c = card(page, mid)
    c.get_by_role("textbox").first.fill(XSS + "other")  # Other's text
    c.locator("textarea").fill(XSS + "answer")
    c.get_by_role("button", name="Send", exact=True).click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    expect(page.locator(".msg-user .qanswer")).to_contain_text("answer")
    # what the assistant receives (the raw envelope): with "developer details" on
    expect(page.locator(".qanswer details summary")).to_be_hidden()
    page.get_by_role("switch", name="Developer details").click()
    expect(page.get_by_role("switch", name="Developer details")).to_have_attribute(
        "aria-checked", "true"
    )
    page.locator(".qanswer details summary").click()
    page.wait_for_timeout(300)
    assert page.dialogs == []
    count = page.evaluate("document.querySelectorAll('.msg script, .msg img, .msg svg').length")
    assert count == 0
    page.get_by_role("switch", name="Developer details").click()  # off again (per user)
    expect(page.get_by_role("switch", name="Developer details")).to_have_attribute(
        "aria-checked", "false"
    )


def test_card_fits_360px_in_dark_mode(browser, server):
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, color_scheme="dark")
    page = ctx.new_page()
    login(page, server)
    _cid, mid = open_with_card(page, server)
    c = card(page, mid)
    expect(c.get_by_role("button", name="Send", exact=True)).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    background = page.evaluate("getComputedStyle(document.querySelector('.qcard')).backgroundColor")
    assert background != "rgb(255, 255, 255)"  # dark theme variables apply
    ctx.close()
