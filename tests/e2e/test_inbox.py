"""The inbox in a real browser: two conversations' waiting questions, both listed from the
home page's link; a deep link opens its card in its conversation, scrolled into view and
marked; a short question answered in place is recorded as a click on the card; the count
follows. Screenshots of the inbox (1280/360, light/dark) with SCREENSHOTS_DIR set."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import PASSWORD, login

SETUP = """
import json
from django.contrib.auth.models import User
from chat.core.services import conversation_create
from questionnaires.asks.services import ask_create
from tests.support.asking import SPEC_PAYLOAD
user, _ = User.objects.get_or_create(username={name!r})
user.set_password({password!r}); user.save()
knee = conversation_create(owner=user, title="Knee check", agent="external")
lunch = conversation_create(owner=user, title="Lunch plans", agent="external")
for n in range(6):  # earlier messages, so the card is below the fold
    from chat.core.services import message_create
    message_create(conversation=knee, role="user", content="Earlier message " + str(n))
    message_create(conversation=knee, role="assistant", content="Noted. " * 40)
pain = ask_create(conversation=knee, payload=SPEC_PAYLOAD, turn_id="t1")
yes = ask_create(conversation=lunch, turn_id="t2", payload={{
    "question": "Soup today?", "field": "soup", "type": "boolean"}})
print(json.dumps([knee.pk, lunch.pk, pain.pk, yes.pk]))
"""


@pytest.fixture
def person(server):
    """A person of their own (the shared users' inboxes fill up across tests)."""
    name = f"ivy{uuid.uuid4().hex[:8]}"  # each test its own, so counts never add up
    ids = server.json(SETUP.format(name=name, password=PASSWORD))
    return name, ids


def test_inbox_lists_both_conversations_deep_links_and_answers_in_place(browser, server, person):
    name, (knee, lunch, pain, yes) = person
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 800})
    page = context.new_page()
    login(page, server, name)
    link = page.locator("#inbox-link")
    expect(link.locator(".inbox-count")).to_contain_text("2")
    link.click()
    page.wait_for_url("**/inbox/")
    items = page.locator(".inbox-item")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("Soup today?")  # newest first
    expect(items.nth(0)).to_contain_text("Lunch plans")
    expect(items.nth(1)).to_contain_text("你的膝盖下坠感是否伴随疼痛？")
    expect(items.nth(1)).to_contain_text("Knee check")
    # with JavaScript the deadline counts down ("in 23 hours"), without it is a date
    expect(items.nth(0).locator("time[data-countdown]")).to_contain_text("in ")
    _shots(page, "inbox")
    if os.environ.get("SCREENSHOTS_DIR"):
        page.goto(server.url + "/settings/notifications")
        expect(page.locator("[data-notify-ask]")).to_be_visible()  # asked only on a click
        _shots(page, "notify-settings")
        page.goto(server.url + "/inbox/a/forged/")
        _shots(page, "answer-link-refused")
        page.goto(server.url + "/inbox/")

    # the deep link: its conversation, the card scrolled into view and marked
    items.nth(1).locator("[data-inbox-open]").click()
    page.wait_for_url(f"**/conversations/{knee}/#ask-{pain}")
    card = page.locator(f"#ask-{pain}")
    expect(card).to_have_class(re.compile(r"\bis-target\b"))
    expect(card).to_be_in_viewport()

    # back in the inbox, the yes/no answered in place
    page.goto(server.url + "/inbox/")
    item = page.locator(f'[data-inbox-item="ask:{yes}"]')
    item.get_by_role("button", name="Yes").click()
    expect(page.locator(".inbox-done")).to_contain_text("Answered “Soup today?”: Yes")
    expect(page.locator(".inbox-item")).to_have_count(1)
    expect(page.locator("#inbox-link .inbox-count")).to_contain_text("1")  # at once
    recorded = server.json(
        "import json\nfrom questionnaires.asks.models import StructuredAnswer\n"
        f"a = StructuredAnswer.objects.get(ask_message_id={yes})\n"
        "print(json.dumps([a.value, a.source]))"
    )
    assert recorded == [True, "user_option_click"]  # as a click on the card
    # the conversation shows the answer as the card would have
    page.goto(f"{server.url}/conversations/{lunch}/")
    expect(page.locator("#messages .msg-user").last).to_contain_text("Yes")
    expect(page.locator("#inbox-link .inbox-count")).to_contain_text("1")
    context.close()


def test_without_javascript_the_inbox_answers_and_shows_dates(browser, server, person):
    name, (_knee, _lunch, _pain, yes) = person
    context = browser.new_context(locale="en-US", java_script_enabled=False)
    page = context.new_page()
    login(page, server, name)
    page.goto(server.url + "/inbox/")
    deadline = page.locator(f'[data-inbox-item="ask:{yes}"] time[data-countdown]')
    expect(deadline).not_to_contain_text("in ")  # the plain date
    page.locator(f'[data-inbox-item="ask:{yes}"]').get_by_role("button", name="No").click()
    page.wait_for_url("**/inbox/")
    expect(page.locator(".inbox-done")).to_contain_text("Answered “Soup today?”: No")
    page.select_option("select[name=k]", "inline")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(".inbox-empty")).to_contain_text("No waiting question matches")
    context.close()


def _shots(page, name: str) -> None:
    """With SCREENSHOTS_DIR set: the page at 1280 and 360 px, light and dark."""
    out = os.environ.get("SCREENSHOTS_DIR")
    if not out:
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    for width, height in ((1280, 800), (360, 740)):
        page.set_viewport_size({"width": width, "height": height})
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            page.screenshot(path=f"{out}/{name}-en-{width}-{theme}.png")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.emulate_media(color_scheme="light")


def test_the_inbox_in_simplified_chinese(browser, server, person):
    name, _ids = person
    context = browser.new_context(locale="zh-CN", viewport={"width": 360, "height": 740})
    page = context.new_page()
    login(page, server, name)
    page.goto(server.url + "/inbox/")
    expect(page.locator("h1")).to_have_text("等你回答的问题")
    expect(page.locator(".inbox-item").first).to_contain_text("提问于")
    expect(page.locator(".menu-btn").first).to_have_attribute("data-inbox-waiting", "")
    if os.environ.get("SCREENSHOTS_DIR"):
        for theme in ("light", "dark"):
            page.emulate_media(color_scheme=theme)
            page.screenshot(path=f"{os.environ['SCREENSHOTS_DIR']}/inbox-zh-hans-360-{theme}.png")
    context.close()


NOTIFICATION_STUB = """
window.__notes = [];
window.Notification = function (title, options) {
  window.__notes.push({title: title, body: options.body, tag: options.tag});
  this.close = function () {};
};
window.Notification.permission = "granted";
window.Notification.requestPermission = function () { return Promise.resolve("granted"); };
"""


def test_a_question_opened_elsewhere_shows_a_browser_notification_with_its_link(
    browser, server, person
):
    name, (knee, _lunch, _pain, _yes) = person
    server.shell(
        "from django.contrib.auth.models import User\n"
        "from chat.core.preferences import notify_set\n"
        f"notify_set(User.objects.get(username={name!r}), mode='immediate', email='')"
    )
    context = browser.new_context(locale="en-US")
    context.add_init_script(NOTIFICATION_STUB)
    page = context.new_page()
    login(page, server, name)
    page.goto(server.url + "/inbox/")
    expect(page.locator("#inbox-link")).to_have_attribute("data-count", "2")
    server.shell(
        "from chat.core.models import Conversation\n"
        "from questionnaires.asks.services import ask_create\n"
        f"ask_create(conversation=Conversation.objects.get(pk={knee}), turn_id='t9',"
        " payload={'question': 'Ice or heat?', 'field': 'care', 'options': ["
        "{'label': 'Ice', 'value': 'ice'}, {'label': 'Heat', 'value': 'heat'}]})"
    )
    page.evaluate("htmx.trigger('#inbox-link', 'inbox:poll')")
    expect(page.locator("#inbox-link")).to_have_attribute("data-count", "3")
    page.wait_for_function("window.__notes.length > 0")  # shown once the swap settled
    notes = page.evaluate("window.__notes")
    assert [n["title"] for n in notes] == ["Ice or heat?"]
    assert notes[0]["body"] == "Knee check" and notes[0]["tag"].startswith("ask:")
    url = page.locator("#inbox-link").get_attribute("data-notices")
    assert "/inbox/a/" in url  # the notification opens the card through its own link
    context.close()
