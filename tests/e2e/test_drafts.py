"""Card drafts in a real browser: what a person typed into a card survives a reload and
shows in another tab; submitting the card clears it."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import login
from tests.e2e.test_cards import card, open_with_card
from tests.support import wait_for


def _draft_saved(response, text: str) -> bool:
    """The debounced draft save that carries `text` was stored (204)."""
    request = response.request
    return (
        request.method == "POST"
        and request.url.endswith("/drafts")
        and text in (request.post_data or "")
        and response.status == 204
    )


def test_a_card_draft_survives_a_reload_and_shows_in_another_tab(browser, page, server):
    cid, mid = open_with_card(page, server)
    c = card(page, mid)
    c.get_by_label("Other answer to: Where to?").fill("Lisbon, by the sea")
    c.get_by_label("Plane").check()
    with page.expect_response(lambda r: _draft_saved(r, "An aisle seat, please")):
        c.locator("textarea").fill("An aisle seat, please")  # (saved after a pause)
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
        "from questionnaires.drafts import CardDraft\n"
        f"print(CardDraft.objects.filter(conversation_id={cid}).count())"
    )  # (of this conversation: the live server is shared with other tests)
    assert drafts.strip().splitlines()[-1] == "0"


def test_what_was_typed_just_before_leaving_is_saved(page, server):
    """Typing, then reloading or closing the tab before the save's pause ends, still keeps
    the text: the page saves what waits when it goes away (pagehide, keepalive)."""
    cid, mid = open_with_card(page, server)
    page.clock.install()  # timers stand still: the debounced save never comes by itself
    page.reload()
    card(page, mid).locator("textarea").fill("Typed, then gone")
    page.goto(f"{server.url}/")  # leaves at once
    query = (
        "from questionnaires.drafts import CardDraft\n"
        f"print(list(CardDraft.objects.filter(conversation_id={cid}).values_list('fields', flat=True)))"
    )
    wait_for(lambda: "Typed, then gone" in server.shell(query), "the draft saved on leaving")
    page.goto(f"{server.url}/conversations/{cid}/")
    expect(card(page, mid).locator("textarea")).to_have_value("Typed, then gone")


def test_a_reload_right_after_typing_shows_the_text(page, server):
    """The reloaded page can be served before the draft's save is stored: the tab puts
    back what it sent (kept in sessionStorage for a few seconds). Here the save never
    reaches the server at all."""
    cid, mid = open_with_card(page, server)
    page.clock.install()  # timers stand still: the debounced save never comes by itself
    page.reload()
    page.route("**/drafts", lambda route: route.abort())
    c = card(page, mid)
    c.get_by_label("Other answer to: Where to?").fill("Porto")
    c.get_by_label("Plane").check()
    c.locator("textarea").fill("Typed, then reloaded")
    page.reload()
    c = card(page, mid)
    expect(c.locator("textarea")).to_have_value("Typed, then reloaded")
    expect(c.get_by_label("Other answer to: Where to?")).to_have_value("Porto")
    expect(c.get_by_label("Other", exact=True)).to_be_checked()
    expect(c.get_by_label("Plane")).to_be_checked()
    # what was put back is saved again after the pause, now that the server answers
    page.unroute("**/drafts")
    with page.expect_response(lambda r: _draft_saved(r, "Typed, then reloaded")):
        page.clock.run_for(1000)
