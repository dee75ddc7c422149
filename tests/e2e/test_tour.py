"""The Protocol tour is an acceptance test (issue 32): a browser walks it to its end by its
own words, in English and Simplified Chinese, and the deferred-form tour from the home page.

Each tour message ends with an instruction whose bold words name the buttons to press, in
order ("Choose an answer, then press **Send**"). The walk reads that last paragraph and
presses each named button: in the message's own card or a later one (an MCP server's
form, the pause card), else on the nearest card above ("press **Change answer** on the
card above"). Only what no words can say is filled in here: the required fields of a form
and, for a change, another answer than the first.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, expect

from tests.support import wait_for

from .conftest import login

TIMEOUT = 30_000  # generous: a busy CI box delivers live updates late; only a failure waits
STEP_WAIT = 30.0

# Each assistant message's last paragraph of prose, with its bold words (message id, words).
# Each assistant message's last paragraph of prose: (message id, its bold words, the card
# it names in quotes, if any).
INSTRUCTIONS = """() => [...document.querySelectorAll('#messages article.msg-assistant')].map(a => {
  const prose = a.querySelectorAll(':scope > .msg-body > p');
  const last = prose[prose.length - 1];
  if (!last) return [a.id, [], ""];
  const quoted = last.textContent.match(/“([^”]+)”/);
  return [a.id, [...last.querySelectorAll('strong')].map(s => s.textContent.trim()),
          quoted ? quoted[1] : ""];
})"""

WATCH_PREVIEW = """() => {
  window.qcPreviewSeen = [];
  const box = document.querySelector('#run-live .run-preview-text');
  new MutationObserver(() => {
    if (box.textContent) window.qcPreviewSeen.push(box.textContent.length);
  }).observe(box, {childList: true, characterData: true, subtree: true});
}"""

END = {
    "en": ("That is the whole tour", "en-US"),
    "zh-hans": ("导览到此结束", "zh-CN"),
}


def _controls(scope: Locator, name: str) -> Locator:
    exact = re.compile(rf"^\s*{re.escape(name)}\s*$")
    return scope.locator("button, a.btn").filter(has_text=exact)


def _target(page: Page, message_id: str, name: str, card: str) -> Locator:
    """The control the instruction of `message_id` names: in its message or a later one
    (the first that shows), else on the card above titled `card` (the instruction quotes
    it: "on the “Within the budget” card above"), opened first if it is folded."""

    def find() -> Locator | None:
        later = _controls(page.locator(f"#{message_id}, #{message_id} ~ article"), name)
        for index in range(later.count()):
            if later.nth(index).is_visible() and later.nth(index).is_enabled():
                return later.nth(index)
        if not card:
            return None
        above = page.locator(f"#messages article:has(~ #{message_id}) section.qcard").filter(
            has=page.locator(".qcard-title", has_text=re.compile(rf"^\s*{re.escape(card)}\s*$"))
        )
        if not above.count():
            return None
        folded = above.last.locator("details.qcard-fold:not([open]) > summary")
        if folded.count():
            folded.first.click()  # what a person does to see a folded card's actions
        control = _controls(above.last, name)
        return control.first if control.count() and control.first.is_visible() else None

    return wait_for(find, f"a button named {name!r} for {message_id}", timeout=STEP_WAIT)


def _fill_required(control: Locator) -> None:
    """A form's required fields that are still empty get a plausible value (the words say
    "fill in a date and the party size"; what to type is the test's)."""
    form = control.locator("xpath=ancestor::form[1]")
    if not form.count():
        return
    fields = form.locator("input[required], textarea[required]")
    for index in range(fields.count()):
        field = fields.nth(index)
        kind = field.get_attribute("type") or "text"
        if not field.is_visible() or kind in ("radio", "checkbox") or field.input_value():
            continue
        field.fill({"date": "2026-05-01", "number": "2"}.get(kind, "Tour"))


def _pick_another_answer(control: Locator) -> None:
    """A change needs another answer than the first: choose an option not chosen yet."""
    form = control.locator("xpath=ancestor::form[1]")
    radios = form.locator("input[type=radio]:not(:checked)")
    for index in range(radios.count()):
        radio = radios.nth(index)
        label = form.locator(f"label[for='{radio.get_attribute('id')}']")
        if label.count() and label.first.is_visible():
            label.first.click()
            return


def _press(page: Page, message_id: str, name: str, *, card: str, change: bool) -> None:
    control = _target(page, message_id, name, card)
    _fill_required(control)
    if change:
        _pick_another_answer(control)
    _idle(page)
    # The element itself, not the locator: once this card is answered, the locator would
    # find the next card's button of the same name.
    pressed = control.element_handle()
    pressed.click()
    # The click took: the button is gone (answered card, opened change form) or locked.
    # A click that landed while the card was being re-rendered (a live refresh swapping
    # it) is lost, as it would be for a person, who clicks again: so does the walk, only
    # when nothing is in flight and that very button still waits.
    clicks, clicked = 1, time.monotonic()

    def used() -> bool:
        nonlocal clicks, clicked
        if not pressed.evaluate(USABLE):
            return True
        if clicks < 3 and _quiet(page) and time.monotonic() - clicked > 5:
            try:
                pressed.click(timeout=2_000)
            except PlaywrightError:  # swapped out meanwhile: the first click took
                return True
            clicks, clicked = clicks + 1, time.monotonic()
        return False

    wait_for(used, f"{name!r} to be used", timeout=STEP_WAIT)


# One look (a card swapped out between two looks would fail the second): still in the
# page, shown and enabled.
USABLE = """b => b.isConnected && !b.disabled && !b.closest('fieldset[disabled]')
  && b.getClientRects().length > 0"""


def _quiet(page: Page) -> bool:
    return bool(page.evaluate("() => !document.querySelector('.htmx-request')"))


def _idle(page: Page) -> None:
    """No htmx request in flight (a card form drops a submit while one is)."""
    wait_for(lambda: _quiet(page), "htmx to settle", timeout=STEP_WAIT)


def follow_the_tour(page: Page, end: str, change_words: str) -> list[list[str]]:
    """Press what each instruction names until the message that ends the tour; returns
    the instructions followed."""
    followed: dict[str, list[str]] = {}

    def next_instruction() -> tuple[str, list[str], str] | str | None:
        for message_id, words, card in page.evaluate(INSTRUCTIONS):
            if words and message_id not in followed:
                return message_id, words, card
        return "end" if page.locator("#messages .msg-assistant", has_text=end).count() else None

    while True:
        found = wait_for(next_instruction, "the tour's next instruction", timeout=STEP_WAIT)
        if found == "end":
            return list(followed.values())
        assert isinstance(found, tuple)
        message_id, words, card = found
        followed[message_id] = words
        after_change = False
        for name in words:
            _press(page, message_id, name, card=card, change=after_change)
            after_change = name == change_words


def _walk(page: Page, server, lang: str) -> None:
    end, _locale = END[lang]
    page.goto(server.url + "/")
    # the home page's quick start (no message typed): the tour opens by itself
    page.locator(
        "form:has(input[name=agent][value=scripted]):not(:has(input[name=script]))"
        " button.start-chip"
    ).click()
    page.wait_for_url("**/conversations/*/")
    conversation_id = int(page.url.rstrip("/").split("/")[-1])
    page.evaluate(WATCH_PREVIEW)
    change = "修改答案" if lang == "zh-hans" else "Change answer"
    followed = follow_the_tour(page, end, change)
    # every step but the last says what to do (the MCP step twice: its form, then a card)
    assert len(followed) == 13, followed
    assert [change, "发送修改" if lang == "zh-hans" else "Send the change"] in followed

    def settled(p: Page) -> None:
        # Every question reached an end state: none was closed unanswered ("Not answered")
        # by following the tour, and nothing is left open.
        expect(p.locator("#messages .msg-assistant", has_text=end)).to_have_count(1)
        expect(p.locator("#messages section[data-card-mode=closed]")).to_have_count(0)
        expect(p.locator("#messages section[data-card-mode=interactive]")).to_have_count(0)
        # the pause step failed once, so one "trouble showing a question" box, not two
        expect(p.locator("#messages .qcard-error")).to_have_count(2)  # step 6 and step 9

    expect(page.locator("#run-status .run-active")).to_have_count(0, timeout=TIMEOUT)
    assert page.evaluate("window.qcPreviewSeen.length") > 0, "no streaming preview"
    settled(page)
    page.reload()  # the record says the same after a reload
    settled(page)
    # What the agent received: the change went out as an amendment of the budget card.
    out = server.shell(
        "from chat.models import Message, Run\n"
        f"runs = Run.objects.filter(conversation_id={conversation_id}).order_by('id')\n"
        "print(list(runs.values_list('stop_reason', flat=True)))\n"
        f"last = Message.objects.filter(conversation_id={conversation_id}, role='user')"
        ".order_by('-seq').first()\n"
        "print('amends' in last.content, 'amended' in last.content)"
    )
    lines = out.strip().splitlines()
    assert re.findall(r"'(\w+)'", lines[-2]) == ["awaiting_user_input"] * 8 + [
        "max_iterations",
        "awaiting_user_input",
        "awaiting_user_input",
        "completed",
        "completed",
    ]
    assert lines[-1] == "True True"


def test_the_protocol_tour_follows_its_own_words_in_english(page, server):
    _walk(page, server, "en")


@pytest.fixture
def zh_page(browser, server):
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(30_000)
    login(page, server)
    yield page
    context.close()


def test_the_protocol_tour_follows_its_own_words_in_chinese(zh_page, server):
    _walk(zh_page, server, "zh-hans")


def test_the_deferred_form_tour_starts_from_the_home_page(page, server):
    """No admin edit (issue 32, defect 11): the home page's quick start opens the
    deferred-form tour on its form; following its words ends it."""
    page.goto(server.url + "/")
    page.get_by_role("button", name="Take the deferred-form tour").click()
    page.wait_for_url("**/conversations/*/")
    expect(page.locator(".chat-title")).to_contain_text("Deferred-form tour")
    conversation_id = int(page.url.rstrip("/").split("/")[-1])
    followed = follow_the_tour(page, "That is the end of the deferred-form tour", "")
    assert followed == [["Send"]]
    out = server.shell(
        "from questionnaires.models import InteractiveForm\n"
        f"print(list(InteractiveForm.objects.filter(conversation_id={conversation_id})"
        ".values_list('status', flat=True)))"
    )
    assert out.strip().splitlines()[-1] == "['answered']"
