"""Card drafts in a real browser: what a person typed into a card survives a reload and
shows in another tab; submitting the card clears it."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import login
from tests.e2e.test_cards import card, open_with_card


def test_a_card_draft_survives_a_reload_and_shows_in_another_tab(browser, page, server):
    cid, mid = open_with_card(page, server)
    c = card(page, mid)
    c.get_by_label("Other answer to: Where to?").fill("Lisbon, by the sea")
    c.get_by_label("Plane").check()
    c.locator("textarea").fill("An aisle seat, please")
    page.wait_for_timeout(1500)  # the debounced save
    page.reload()
    c = card(page, mid)
    expect(c.get_by_label("Other answer to: Where to?")).to_have_value("Lisbon, by the sea")
    expect(c.get_by_label("Plane")).to_be_checked()
    expect(c.locator("textarea")).to_have_value("An aisle seat, please")

    other_ctx = browser.new_context(locale="en-US")
    other = other_ctx.new_page()
    login(other, server)
    other.goto(f"{server.url}/conversations/{cid}/")
    expect(card(other, mid).locator("textarea")).to_have_value("An aisle seat, please")
    other_ctx.close()

    c.get_by_role("button", name="Send", exact=True).click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered", timeout=15000)
    drafts = server.shell(
        "from questionnaires.drafts import CardDraft; print(CardDraft.objects.count())"
    )
    assert drafts.strip().splitlines()[-1] == "0"
