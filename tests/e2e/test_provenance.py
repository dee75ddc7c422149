"""Issue 32 in a real browser: every recorded answer is true.

(2) "kept the default" only for a question the person never touched: a click on the
preselected option, a change and back, a card's one button are the person's choice.
(4) Without JavaScript, text typed into "Other" is never lost.
(8) A tab whose click lost the race with another tab says so, shows the answer that
counts, and what it had chosen."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import login, new_conversation, wait_routed
from tests.e2e.test_beyond import last_envelope
from tests.e2e.test_cards import card, open_with_card, post_assistant
from tests.support.asking import TRIP

PAUSE = (
    "Paused.\n\n```questionnaire\ntitle: Task paused\nquestions:\n"
    "  - type: single_choice\n    text: Continue the current task?\n    options:\n"
    "      - Continue\n    default: Continue\n```\n"
)


def test_a_click_on_the_preselected_option_is_chosen_not_kept_default(page, server):
    cid, mid = open_with_card(page, server)
    c = card(page, mid)
    c.get_by_label("Paris", exact=True).click()  # already selected: still a choice
    c.get_by_label("Plane").check()  # a change ...
    c.get_by_label("Plane").uncheck()  # ... and back to the default
    c.get_by_role("button", name="Send", exact=True).click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    answer = page.locator(".msg-user .qanswer").last
    expect(answer).to_contain_text("Paris")
    expect(answer).not_to_contain_text("kept the default")
    envelope = last_envelope(server, cid)
    assert [a["provenance"] for a in envelope["answers"]][:2] == ["chosen", "chosen"]
    page.reload()  # the record reads the same after a reload
    expect(page.locator(".msg-user .qanswer").last).not_to_contain_text("kept the default")


def test_the_one_button_of_a_pause_is_a_click(page, server):
    cid = new_conversation(page, server, title="Pause")
    mid = post_assistant(server, cid, PAUSE)
    page.reload()
    card(page, mid).get_by_role("button", name="Continue").click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    expect(page.locator(".msg-user .qanswer").last).not_to_contain_text("kept the default")
    assert last_envelope(server, cid)["answers"][0]["provenance"] == "chosen"


def test_no_js_other_text_typed_without_ticking_other_is_sent(browser, server):
    ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    page = ctx.new_page()
    login(page, server)
    cid = new_conversation(page, server, title="No JS other")
    mid = post_assistant(server, cid, TRIP)
    page.reload()
    c = card(page, mid)
    c.get_by_label("Other answer to: Where to?").fill("Oslo")  # "Other" stays unticked
    expect(c.get_by_label("Paris", exact=True)).to_be_checked()
    c.get_by_role("button", name="Send", exact=True).click()
    page.wait_for_url(f"**/conversations/{cid}/**")
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    answer = page.locator(".msg-user .qanswer").last
    expect(answer).to_contain_text("Oslo")
    expect(answer).not_to_contain_text("Paris")
    first = last_envelope(server, cid)["answers"][0]
    assert first["other_text"] == "Oslo" and first["provenance"] == "free_text"
    ctx.close()


# --- (8) two tabs answer at the same moment ----------------------------------------------


def _two_tabs(browser, page, server):
    cid, mid = open_with_card(page, server)
    other_ctx = browser.new_context(locale="en-US")
    other = other_ctx.new_page()
    login(other, server)
    other.goto(f"{server.url}/conversations/{cid}/")
    expect(card(other, mid)).to_have_attribute("data-card-mode", "interactive")
    return cid, mid, other_ctx, other


def test_a_click_that_lost_the_race_says_so_and_what_was_not_sent(browser, page, server):
    cid, mid, other_ctx, other = _two_tabs(browser, page, server)
    held = []
    other.route(f"**/messages/{mid}/answer", lambda route: held.append(route))
    c = card(other, mid)
    c.get_by_label("Rome").check()
    c.get_by_role("button", name="Send", exact=True).click()  # on its way (held) ...
    wait_routed(other, held, "the other tab's answer to leave")
    card(page, mid).get_by_role("button", name="Send", exact=True).click()  # ... this one wins
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    # the live update reaches the other tab while its own answer is still on its way
    expect(other.locator(".msg-user .qanswer")).to_have_count(1)
    held[0].continue_()
    notice = other.locator(f"#msg-{mid} .msg-notice")
    expect(notice).to_have_attribute("data-error-code", "questionnaire_already_submitted")
    expect(notice).to_have_attribute("role", "alert")
    expect(notice).to_contain_text("already answered")
    expect(notice).to_contain_text("What you chose here was not sent: Rome (for “Where to?”)")
    expect(notice).to_be_focused()
    expect(card(other, mid)).to_have_attribute("data-card-mode", "answered")
    expect(card(other, mid).get_by_label("Paris", exact=True)).to_be_checked()
    expect(card(other, mid).get_by_role("link", name="Change answer")).to_be_visible()
    assert last_envelope(server, cid)["answers"][0]["value"] == "Paris"
    other_ctx.close()


def test_a_card_being_filled_in_that_another_tab_answers_says_so(browser, page, server):
    _cid, mid, other_ctx, other = _two_tabs(browser, page, server)
    c = card(other, mid)
    c.get_by_label("Rome").check()  # the person is choosing here ...
    card(page, mid).get_by_role("button", name="Send", exact=True).click()  # ... answered there
    notice = other.locator(f"#msg-{mid} .msg-notice")
    expect(notice).to_have_attribute("role", "alert")
    expect(notice).to_contain_text("already answered")
    expect(notice).to_contain_text("What you chose here was not sent: Rome (for “Where to?”)")
    expect(notice).to_be_focused()
    expect(card(other, mid)).to_have_attribute("data-card-mode", "answered")
    expect(card(other, mid).get_by_role("link", name="Change answer")).to_be_visible()
    other_ctx.close()


def test_other_text_left_behind_after_picking_another_option_is_not_sent(page, server):
    """With JavaScript an explicit pick after typing wins (the text stays in its box)."""
    cid, mid = open_with_card(page, server)
    c = card(page, mid)
    c.get_by_label("Other answer to: Where to?").fill("Oslo")  # ticks "Other"
    c.get_by_label("Rome").check()
    c.get_by_role("button", name="Send", exact=True).click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    first = last_envelope(server, cid)["answers"][0]
    assert first["value"] == "Rome" and "other_text" not in first
