"""Issue 32 (live == reloaded): what a live tab shows is what a reload shows, no refusal
outlives its cause, and the flows log no console errors. Each test failed before its fix."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import login, new_conversation, start_from_home

TIMEOUT = 30_000  # generous: a busy CI box delivers live updates late; only a failure waits


def _console_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.evaluate(
        """() => document.body.addEventListener("htmx:oobErrorNoTarget", e =>
            console.error("htmx:oobErrorNoTarget " + (e.detail.content && e.detail.content.outerHTML || "").slice(0, 120)))"""
    )
    return errors


def _forms_conversation(page, server) -> int:
    conversation_id = new_conversation(page, server, agent="scripted", title="Trip", script="forms")
    page.fill("#id_content", "Plan a trip for me")
    page.press("#id_content", "Enter")
    expect(page.locator("section.iform")).to_be_visible(timeout=TIMEOUT)
    return conversation_id


def _refuse_text(page, text: str) -> None:
    page.fill("#id_content", text)
    page.press("#id_content", "Enter")
    expect(page.get_by_role("group", name="A form is waiting")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#composer-error")).to_contain_text("A form is waiting")


# --- defect 5: no refusal outlives its cause -------------------------------------------------


def test_the_composer_refusal_leaves_once_the_form_is_answered_in_this_tab(page, server):
    _forms_conversation(page, server)
    _refuse_text(page, "Actually, what about trains?")
    card = page.locator("section.iform")
    card.get_by_label("City").check()
    card.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator("section.iform-answered")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_role("group", name="A form is waiting")).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator("#composer-error")).to_have_count(0)
    expect(page.locator("#id_content")).not_to_have_attribute("aria-invalid", "true")
    # what the person typed is still there, ready to send now
    expect(page.locator("#id_content")).to_have_value("Actually, what about trains?")


def test_the_composer_refusal_leaves_when_another_tab_answers_the_form(browser, page, server):
    conversation_id = _forms_conversation(page, server)
    _refuse_text(page, "Is it sunny there?")
    other_ctx = browser.new_context(locale="en-US")
    other = other_ctx.new_page()
    login(other, server)
    other.goto(f"{server.url}/conversations/{conversation_id}/")
    card = other.locator("section.iform")
    card.get_by_label("Mountains").check()
    card.get_by_role("button", name="Send", exact=True).click()
    expect(other.locator("section.iform-answered")).to_be_visible(timeout=TIMEOUT)
    other_ctx.close()
    expect(page.locator("section.iform-answered")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_role("group", name="A form is waiting")).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator("#composer-error")).to_have_count(0)
    expect(page.locator("#id_content")).to_have_value("Is it sunny there?")


# --- defect 13: no htmx errors in the console ------------------------------------------------


def test_opening_the_tour_logs_no_console_errors(page, server):
    """The tour's first answer while the stream's refresh of the card is due: the submit's
    response is held back until the stream has announced the answer, so the refresh and
    the response meet (a live update of a card now waits for this tab's own answer, so
    the refresh lands after it); nothing either swaps in may point outside the card."""
    page.goto(server.url + "/")
    errors = _console_errors(page)
    start_from_home(page, server, agent="scripted")
    card = page.locator("#messages section.qcard-interactive").last
    expect(card).to_be_visible(timeout=TIMEOUT)
    qid = card.get_attribute("data-questionnaire-id")
    held = []
    # the answer reaches the server; its response is held back
    page.route("**/messages/*/answer", lambda route: held.append((route, route.fetch())))
    card.locator("button[type=submit]:not([value=decline])").click()
    for _ in range(300):  # Playwright delivers the route only while it is called
        if held:
            break
        page.wait_for_timeout(100)
    page.wait_for_timeout(500)  # the stream's announcement of the answer arrives meanwhile
    route, response = held[0]
    route.fulfill(response=response)
    expect(page.locator(f'section[data-questionnaire-id="{qid}"]')).to_have_attribute(
        "data-card-mode", "answered", timeout=TIMEOUT
    )
    expect(page.locator("#messages section.qcard-interactive").last).not_to_have_attribute(
        "data-questionnaire-id", str(qid), timeout=TIMEOUT
    )
    expect(page.locator("#messages .msg-user")).to_have_count(1)
    page.reload()
    expect(page.locator(f'section[data-questionnaire-id="{qid}"]')).to_have_count(1)
    assert errors == [], errors


def test_retry_logs_no_console_errors(page, server):
    conversation_id = new_conversation(page, server, agent="echo", title="Retry console")
    errors = _console_errors(page)
    page.fill("#id_content", "Count to three")
    page.click("#composer button[type=submit]")
    expect(page.locator("#messages .msg-assistant")).to_contain_text("Echo: Count to three")
    server.shell(
        "from chat.models import Run\n"
        f"Run.objects.filter(conversation_id={conversation_id}).update("
        "status='cancelled', stop_reason='cancelled')"
    )
    page.reload()
    errors = _console_errors(page)
    old_reply = page.locator("#messages .msg-assistant").get_attribute("id")
    page.locator("#run-status .run-cancelled").get_by_role("button", name="Retry").click()
    expect(page.locator(f"#{old_reply}")).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator("#messages .msg-assistant")).to_contain_text(
        "Echo: Count to three", timeout=TIMEOUT
    )
    expect(page.locator("#run-status .run-state")).to_have_count(0, timeout=TIMEOUT)
    assert errors == [], errors


# --- defect 6: a live tab shows what a reload shows ------------------------------------------

# The thread as a person reads it: each message in order, with its card's state.
THREAD = """() => Array.from(document.querySelectorAll('#messages > article')).map(a => {
  const ask = a.querySelector('.ask');
  const chip = a.querySelector('.qcard-chip, .ask-chip, [data-state]');
  return [a.id, a.className.includes('msg-user') ? a.querySelector('.msg-body').textContent.trim().replace(/\\s+/g, ' ') : '',
          ask ? ask.dataset.field + ':' + ask.dataset.state : ''].join('|');
})"""


def _same_after_reload(page) -> list[str]:
    live = page.evaluate(THREAD)
    page.reload()
    expect(page.locator("#messages > article")).to_have_count(len(live))
    reloaded = page.evaluate(THREAD)
    assert live == reloaded, (live, reloaded)
    return reloaded


def _ask(page, field: str):
    return page.locator(f'#messages .ask[data-field="{field}"]').last


def test_a_changed_answer_shows_live_as_after_a_reload(page, server):
    start_from_home(page, server, agent="intake", intake="knee")
    _ask(page, "knee_side").get_by_role("button", name="Left knee").click()
    expect(_ask(page, "pain_level")).to_have_attribute("data-state", "open", timeout=TIMEOUT)
    side = _ask(page, "knee_side")
    side.locator("summary.qcard-head").click()  # the answered card is folded
    side.locator(".ask-change summary").click()
    side.locator(".ask-change").get_by_role("button", name="Right knee").click()
    change = page.locator("#messages .msg-user", has_text="Changed my answer")
    expect(change).to_have_count(1, timeout=TIMEOUT)
    # what the agent received: the first answer, then the change; both stay in the thread
    expect(page.locator("#messages .msg-user")).to_have_count(2)
    thread = _same_after_reload(page)
    users = [line for line in thread if line.split("|")[1]]
    assert "Left knee" in users[0] and "Changed my answer" in users[1], thread


def test_a_question_answered_from_the_composer_shows_live_as_after_a_reload(page, server):
    start_from_home(page, server, agent="intake", intake="knee")
    expect(_ask(page, "knee_side")).to_have_attribute("data-state", "open", timeout=TIMEOUT)
    page.fill("#id_content", "my left knee")
    page.press("#id_content", "Enter")
    expect(_ask(page, "pain_level")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator('#messages .ask[data-field="knee_side"]')).to_have_attribute(
        "data-state", "answered", timeout=TIMEOUT
    )
    _same_after_reload(page)


# --- defect 7: Stop keeps what was streamed --------------------------------------------------


def test_stop_keeps_the_streamed_text_live_and_after_a_reload_and_retry_replaces_it(page, server):
    conversation_id = new_conversation(
        page, server, agent="scripted", title="Long answer", script="long_reply"
    )
    page.fill("#id_content", "Tell me everything")
    page.press("#id_content", "Enter")
    preview = page.locator("#run-live .run-preview-text")
    expect(preview).to_contain_text("first paragraph", timeout=TIMEOUT)
    page.locator("#run-status").get_by_role("button", name="Stop").click()
    expect(page.locator("#run-status .run-cancelled")).to_be_visible(timeout=TIMEOUT)
    stopped = page.locator("#messages .msg-assistant.msg-stopped")
    expect(stopped).to_have_count(1, timeout=TIMEOUT)
    expect(stopped).to_contain_text("Here is a long answer")
    expect(stopped.locator(".msg-stopped-note")).to_have_text("Stopped")
    shown = stopped.locator(".msg-body").inner_text()
    assert "That is all there is to say" not in shown  # it was cut short
    # the record: what the model reads next is what the person saw
    stored = server.shell(
        "from chat.models import Message\n"
        f"m = Message.objects.get(conversation_id={conversation_id}, role='assistant')\n"
        "print(repr(m.content))"
    )
    assert " ".join(shown.split()) in " ".join(stored.strip().splitlines()[-1].split())
    _same_after_reload(page)
    expect(page.locator("#messages .msg-stopped")).to_contain_text(shown.split()[0])
    # Retry replaces it with a full answer
    page.locator("#run-status .run-cancelled").get_by_role("button", name="Retry").click()
    expect(page.locator("#messages .msg-stopped")).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator("#messages .msg-assistant")).to_contain_text(
        "That is all there is to say", timeout=TIMEOUT
    )
    expect(page.locator("#messages .msg-assistant")).to_have_count(1)


# --- design: no machinery words for people ---------------------------------------------------

WATCH_RUN = """() => {
  window.qcRunSeen = [];
  const box = document.querySelector('#run-live');
  new MutationObserver(() => window.qcRunSeen.push(box.querySelector('.run-tools').textContent))
    .observe(box, {childList: true, characterData: true, subtree: true});
}"""


def test_a_failed_tool_step_is_not_shown_to_people_as_failed(page, server):
    new_conversation(page, server, agent="scripted", title="Slow", script="slow")
    page.evaluate(WATCH_RUN)
    page.fill("#id_content", "Anything")
    page.press("#id_content", "Enter")
    expect(page.locator("#messages .msg-assistant").last).to_contain_text(
        "another one can finish it", timeout=TIMEOUT
    )
    seen = page.evaluate("window.qcRunSeen")
    assert any("Preparing a questionnaire" in text for text in seen), seen  # while it ran
    assert not any("failed" in text or "done" in text for text in seen), seen
    expect(page.locator("#run-live .run-tools li")).to_have_count(0)
