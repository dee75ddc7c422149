"""The shell around the cards in a real browser: the chat-first home, live titles and
sidebar, the side panel (live, and as a bottom sheet on phones), search, rename, the
branded error page and the favicon."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import (
    htmx_request,
    new_conversation,
    start_from_home,
    wait_for_js,
    wait_routed,
)

TIMEOUT = 30_000  # generous: a busy CI box delivers live updates late; only a failure waits


def _untitled(server, count: int = 1) -> list[int]:
    """Conversations of ann's with no name yet (as the API makes them), oldest first."""
    return server.json(
        "import json\nfrom django.contrib.auth.models import User\n"
        "from chat.core.services import conversation_create\n"
        "ann = User.objects.get(username='ann')\n"
        f"print(json.dumps([conversation_create(owner=ann, agent='echo').pk for _ in range({count})]))"
    )


def test_the_home_composer_creates_the_conversation_on_first_send(page, server):
    page.goto(server.url + "/")
    expect(page.locator("#id_agent")).to_have_value("intake")  # the default, beside the box
    expect(page.locator("#id_agent option[value=echo]")).to_have_count(0)  # developers only
    cid = start_from_home(
        page, server, agent="intake", intake="knee", text="My knee hurts when I run"
    )
    expect(page.locator("#messages .msg-user").first).to_contain_text("My knee hurts when I run")
    expect(page.locator("#chat-title")).to_have_text("My knee hurts when I run")
    expect(page.locator("#messages .msg-assistant").first).to_be_visible(timeout=TIMEOUT)
    expect(page.locator(f'#conv-nav a[href="/conversations/{cid}/"]')).to_have_attribute(
        "aria-current", "page"
    )


def test_the_tour_starts_without_a_dummy_message(page, server):
    start_from_home(page, server, agent="scripted")
    expect(page.locator("#messages section.qcard-interactive").first).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#messages .msg-user")).to_have_count(0)
    expect(page.locator("#chat-title")).to_have_text("Protocol tour")


def test_title_and_sidebar_order_follow_the_conversation_live(page, server):
    older, newer = _untitled(server, 2)
    page.goto(f"{server.url}/conversations/{older}/")
    first = page.locator("#conv-nav .conv-item").first
    expect(first.locator("a")).to_have_attribute("href", f"/conversations/{newer}/")
    page.fill("#id_content", "Plan a weekend in Oslo")
    page.press("#id_content", "Enter")
    expect(page.locator("#chat-title")).to_have_text("Plan a weekend in Oslo", timeout=TIMEOUT)
    expect(first.locator("a")).to_have_attribute("href", f"/conversations/{older}/")
    expect(first).to_contain_text("Plan a weekend in Oslo")
    expect(page).to_have_title("Plan a weekend in Oslo")


ASK = (
    "from chat.models import Conversation\n"
    "from questionnaires.asks.services import ask_create\n"
    "c = Conversation.objects.get(pk={cid})\n"
    "ask_create(conversation=c, turn_id='t1', payload={{'question': 'Which colour?',"
    " 'field': 'colour', 'options': [{{'label': 'Red', 'value': 'red'}},"
    " {{'label': 'Blue', 'value': 'blue'}}]}})"
)


def test_bug5_a_state_panel_appears_live_without_moving_the_thread(page, server):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    cid = new_conversation(page, server, title="Panel later")
    page.fill("#id_content", "hello")
    page.press("#id_content", "Enter")
    expect(page.locator("#messages .msg-assistant")).to_have_count(1, timeout=TIMEOUT)
    expect(page.locator("#state-panel")).to_have_count(0)
    box = page.locator(".chat-column").bounding_box()
    column = (box["x"], box["width"]) if box else None
    server.shell(ASK.format(cid=cid))
    pill = page.locator("#panel-pill")
    expect(pill).to_be_visible(timeout=TIMEOUT)
    expect(pill).to_contain_text("0 of 1 answered")
    box = page.locator(".chat-column").bounding_box()
    assert box and (box["x"], box["width"]) == column  # the thread stayed put
    page.locator('.ask[data-field="colour"]').get_by_role("button", name="Blue").click()
    expect(pill).to_contain_text("1 of 1 answered", timeout=TIMEOUT)
    pill.click()
    expect(page.locator('#state-panel [data-field="colour"]')).to_contain_text("Blue")
    assert not [e for e in errors if "oobErrorNoTarget" in e or "htmx" in e], errors


def test_on_a_phone_the_panel_is_a_bottom_sheet_behind_a_pill(browser, server):
    from .conftest import login

    ctx = browser.new_context(locale="en-US", viewport={"width": 360, "height": 740})
    page = ctx.new_page()
    login(page, server)
    start_from_home(page, server, agent="intake", intake="knee")
    expect(page.locator(".ask").first).to_be_visible(timeout=TIMEOUT)
    sheet = page.locator("#side-panel")
    expect(sheet).to_be_hidden()  # never above the first message
    pill = page.locator("#panel-pill")
    expect(pill).to_be_visible()
    expect(pill).to_contain_text("answered")
    pill.click()
    expect(sheet).to_be_visible()
    expect(sheet).to_have_attribute("role", "dialog")
    expect(sheet).to_have_attribute("aria-modal", "true")
    box = sheet.bounding_box()
    assert box and box["y"] > 100 and abs(box["y"] + box["height"] - 740) < 2  # at the bottom
    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    assert page.evaluate("document.activeElement.id") == "panel-pill"  # focus came back
    ctx.close()


def test_a_list_refreshed_after_a_message_never_overwrites_a_search_typed_since(page, server):
    """The sidebar is refreshed after each message with the search box as it was when the
    refresh was asked for; if the person typed a search meanwhile, the late list must not
    replace their results (CI: a list of 7 where the search had found 1)."""
    _untitled(server)  # so an unfiltered list has more than the one the search finds
    cid = new_conversation(page, server, title="Harbour")
    page.fill("#id_content", "A quiet harbour walk")
    page.press("#id_content", "Enter")
    expect(page.locator("#messages .msg-assistant")).to_have_count(1, timeout=TIMEOUT)
    held = []
    page.route(f"**/conversations/{cid}/shell*", lambda route: held.append(route))
    page.evaluate(
        """() => document.addEventListener("htmx:afterRequest", e => {
             if (e.detail.elt.matches("[data-shell-refresh]")) window.qcShellDone = true;
           })"""
    )
    page.evaluate("htmx.trigger(document.querySelector('[data-shell-refresh]'), 'qc:shell')")
    wait_routed(page, held, "the shell refresh (asked with an empty search)")
    page.fill("#conversation-search", "harbou")
    items = page.locator("#conv-nav .conv-item")
    expect(items).to_have_count(1, timeout=TIMEOUT)
    held[0].continue_()
    wait_for_js(page, "window.qcShellDone === true")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Harbour")


def test_sidebar_search_finds_message_text_and_rename_is_inline(page, server):
    cid = new_conversation(page, server, title="Holiday")
    page.fill("#id_content", "Somewhere calm by the lighthouse")
    page.press("#id_content", "Enter")
    expect(page.locator("#messages .msg-assistant")).to_have_count(1, timeout=TIMEOUT)
    page.evaluate("window.qcNoReload = true")  # gone if anything reloads the page
    page.fill("#conversation-search", "lighthou")
    items = page.locator("#conv-nav .conv-item")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Holiday")  # found by a message, not the title
    page.fill("#conversation-search", "")
    entry = page.locator(f'#conv-nav .conv-item:has(a[href="/conversations/{cid}/"])')
    entry.locator("summary").first.click()
    entry.locator("input[name=title]").fill("Lighthouse weekend")
    entry.locator("input[name=title]").press("Enter")
    expect(page.locator("#chat-title")).to_have_text("Lighthouse weekend")
    expect(page.locator(f'#conv-nav a[href="/conversations/{cid}/"]')).to_be_focused()
    assert page.evaluate("window.qcNoReload") is True


def test_a_deleted_conversation_shows_the_branded_404(page, server):
    cid = new_conversation(page, server, title="Short-lived")
    page.goto(f"{server.url}/conversations/{cid}/")
    entry = page.locator(f'#conv-nav .conv-item:has(a[href="/conversations/{cid}/"])')
    entry.locator("summary").first.click()
    entry.locator(".conv-delete summary").click()
    entry.get_by_role("button", name="Delete for good").click()
    page.wait_for_url(server.url + "/")
    page.goto(f"{server.url}/conversations/{cid}/")
    expect(page.locator("[data-error-page='404']")).to_contain_text("We can’t find that page")
    expect(page.locator("#sidebar")).to_be_visible()  # still inside the app
    expect(page.get_by_role("link", name="Start a new chat")).to_be_visible()


def test_pages_have_a_favicon_and_no_console_error(page, server):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    cid = new_conversation(page, server, title="Icons")
    for path in ("/", f"/conversations/{cid}/", "/questionnaires/playground/"):
        page.goto(server.url + path)
        href = page.locator("link[rel=icon]").first.get_attribute("href")
        assert href and page.request.get(server.url + href).ok
    assert page.request.get(server.url + "/favicon.ico").ok
    assert errors == []


PASTE = """(text) => {
  const box = document.querySelector('#pg-content');
  box.value = text;  // as a mouse paste does: an input event, no key at all
  box.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertFromPaste'}));
}"""


def test_the_playground_previews_a_mouse_paste_beside_the_editor(page, server):
    page.goto(server.url + "/questionnaires/playground/")
    card = (
        "One question:\n\n```questionnaire\ntitle: Pasted\nquestions:\n"
        "  - type: free_text\n    text: Why?\n    default: ''\n```\n"
    )
    page.evaluate(PASTE, card)
    preview = page.locator(".pg-preview")
    expect(preview).to_contain_text("Pasted")
    expect(page.locator(".pg-pass")).to_be_visible()  # self-check passed
    editor = page.locator(".pg-editor").bounding_box()
    shown = page.locator("#pg-preview").bounding_box()
    assert editor and shown and shown["x"] > editor["x"] + editor["width"] - 1  # side by side
    assert shown["y"] < 400  # above the fold, not under the editor
    page.set_viewport_size({"width": 360, "height": 740})
    editor = page.locator(".pg-editor").bounding_box()
    shown = page.locator("#pg-preview").bounding_box()
    assert editor and shown and shown["y"] > editor["y"] + editor["height"] - 1  # stacked
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


def test_a_conversations_menu_holds_still_while_the_list_refreshes(page, server):
    """A search result or a live update of the list arriving while a conversation's menu is
    open waits: the rename being typed is not thrown away; closing the menu brings it."""
    cid = new_conversation(page, server, title="Garden plans")
    entry = page.locator(f'#conv-nav .conv-item:has(a[href="/conversations/{cid}/"])')
    entry.locator("summary").first.click()
    entry.locator("input[name=title]").fill("Garden plans, spring")
    page.fill("#conversation-search", "no such words anywhere")  # a refresh of the list
    htmx_request(page, "conversation-search", "search")
    expect(entry.locator("input[name=title]")).to_have_value("Garden plans, spring")
    with page.expect_response(lambda r: "/search" in r.url):
        entry.locator("summary").first.click()  # closed: the held search result comes
    expect(page.locator("#conv-nav .conv-item")).to_have_count(0)
