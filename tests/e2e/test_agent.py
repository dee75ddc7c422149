"""The Protocol tour in a real browser: first message (through the demo MCP server's
elicitation) to the answered pause questionnaire."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .conftest import login, new_conversation, start_from_home

TIMEOUT = 30_000  # generous: a busy CI box delivers live updates late; only a failure waits

WATCH_PREVIEW = """() => {
  window.qcPreviewSeen = [];
  const box = document.querySelector('#run-live .run-preview-text');
  new MutationObserver(() => {
    if (box.textContent) window.qcPreviewSeen.push(box.textContent.length);
  }).observe(box, {childList: true, characterData: true, subtree: true});
}"""


def interactive_card(page):
    return page.locator("#messages section.qcard-interactive")


def answer_card(page, previous_id: str | None) -> str:
    """Wait for a new answerable card, submit its defaults, return its questionnaire id."""
    card = interactive_card(page).last
    if previous_id is not None:
        expect(card).not_to_have_attribute("data-questionnaire-id", previous_id, timeout=TIMEOUT)
    expect(card).to_be_visible(timeout=TIMEOUT)
    qid = card.get_attribute("data-questionnaire-id")
    assert qid
    card.locator("button[type=submit]:not([value=decline])").click()
    expect(page.locator(f'section[data-questionnaire-id="{qid}"]')).to_have_attribute(
        "data-card-mode", "answered", timeout=TIMEOUT
    )
    return qid


def test_protocol_tour(page, server):
    # The tour opens by itself: chosen on the home page and sent with nothing typed.
    conversation_id = start_from_home(page, server, agent="scripted")
    page.evaluate(WATCH_PREVIEW)

    # 1-4: fenced single choice with Other, multi + free text, sage- name, XML+JSON.
    first = interactive_card(page).last
    expect(first).to_be_visible(timeout=TIMEOUT)
    expect(first.locator(".qcard-other-text")).to_have_count(1)
    qid = answer_card(page, None)
    expect(page.locator("#messages .msg-user").last).to_contain_text("What brings you here?")
    for _ in range(3):
        qid = answer_card(page, qid)
    assert page.evaluate("window.qcPreviewSeen.length") > 0, "no streaming preview"

    # 5: the invalid reply was repaired by self-check; only the repair is shown.
    expect(page.locator("#messages")).to_contain_text(
        "Self-check caught my mistake", timeout=TIMEOUT
    )
    expect(page.locator("#messages")).not_to_contain_text("type alias `multiple_choice`")
    qid = answer_card(page, qid)

    # 6: questionnaire_async — a parameter-error card, then the working card.
    expect(page.locator("#messages")).to_contain_text("fixed the arguments", timeout=TIMEOUT)
    # the failed card is one calm line; what went wrong is behind "Details"
    error = page.locator("#messages .qcard-error").first
    expect(error).to_contain_text("had trouble showing a question")
    expect(error.locator("details")).not_to_have_attribute("open", "")
    qid = answer_card(page, qid)
    assert qid.startswith("call_r"), qid  # a tool card's id is its tool-call id

    # 7: ask_user_options — the intro text, then the widget with its "Why we ask" source.
    ask = page.locator('#messages .ask[data-field="tour_feedback"]')
    expect(ask.locator("button.ask-option")).to_have_count(3, timeout=TIMEOUT)
    expect(ask.locator(".ask-free input[name=text]")).to_be_visible()
    expect(page.locator("#messages")).to_contain_text("Structured information collection")
    ask.get_by_role("button", name="Fine").click()
    expect(ask.locator(".is-chosen")).to_contain_text("Fine", timeout=TIMEOUT)

    # 8: the bundled demo MCP server asks with an elicitation card; its tool's result
    # shows on the locked card, then a questionnaire moves the tour on.
    elic = page.locator("#messages section.elic").last
    expect(elic).to_contain_text("Reserve a table at Chez MCP", timeout=TIMEOUT)
    elic.get_by_label("Date").fill("2026-05-01")
    elic.get_by_label("Party Size").fill("2")
    elic.get_by_role("button", name="Send", exact=True).click()
    expect(elic.locator(".elic-outcome")).to_contain_text("for 2 on 2026-05-01", timeout=TIMEOUT)
    qid = answer_card(page, qid)

    # 9: the step hits its loop limit and pauses with the spec's questionnaire.
    expect(page.locator("#messages")).to_contain_text("its limit of 2 steps", timeout=TIMEOUT)
    pause = interactive_card(page).last
    expect(pause).to_contain_text("Task paused", timeout=TIMEOUT)
    # one clear button, not a one-radio group plus a Send
    expect(pause.get_by_role("radio")).to_have_count(0)
    expect(pause.get_by_role("button", name="Continue")).to_be_visible()
    answer_card(page, qid)

    # 10: answering "Continue" resumes the work (and asks about defaults, skips, declines).
    expect(page.locator("#messages")).to_contain_text("Resumed", timeout=TIMEOUT)
    expect(page.locator("#run-status .run-active")).to_have_count(0, timeout=TIMEOUT)
    runs = server.shell(
        "from chat.models import Run\n"
        f"print(list(Run.objects.filter(conversation_id={conversation_id})"
        ".order_by('id').values_list('stop_reason', flat=True)))"
    )
    assert re.findall(r"'(\w+)'", runs) == ["awaiting_user_input"] * 8 + [
        "max_iterations",
        "awaiting_user_input",
    ]


def test_an_agent_without_a_model_is_disabled_and_explained(page, server):
    # The e2e server has no model endpoint configured.
    page.goto(server.url + "/")
    expect(page.locator("#id_agent option[value=openai]")).to_be_disabled()
    page.select_option("#id_agent", "scripted")  # its description is one you can't pick
    expect(page.locator("#id_agent option[value=openai]")).to_contain_text("not available")
    expect(page.locator("body")).not_to_contain_text("LLM_BASE_URL")  # settings: staff only
    # A conversation made through the API still says what to do, and offers no Retry
    # that could never succeed.
    conversation_id = int(
        server.shell(
            "from django.contrib.auth.models import User\n"
            "from chat.core.services import conversation_create\n"
            "print(conversation_create(owner=User.objects.get(username='ann'), agent='openai').pk)"
        )
        .strip()
        .splitlines()[-1]
    )
    page.goto(f"{server.url}/conversations/{conversation_id}/")
    notice = page.locator("[data-agent-notice=llm_not_configured]")
    expect(notice).to_contain_text("No model is connected")
    expect(notice).not_to_contain_text("LLM_BASE_URL")
    page.fill("#id_content", "Are you there?")
    page.click("#composer button[type=submit]")
    failed = page.locator("#run-status .run-failed")
    expect(failed).to_be_visible(timeout=TIMEOUT)
    expect(failed).to_contain_text("no model is connected")
    expect(failed.get_by_role("button", name="Retry")).to_have_count(0)
    expect(page.locator("#messages .msg-user")).to_contain_text("Are you there?")


def test_failed_run_shows_retry_and_keeps_the_message(page, server):
    conversation_id = new_conversation(page, server, agent="echo", title="Flaky agent")
    page.fill("#id_content", "Are you there?")
    page.click("#composer button[type=submit]")
    expect(page.locator("#messages .msg-assistant")).to_contain_text("Echo: Are you there?")
    # the turn "failed" (as a lost worker or a model error would leave it)
    server.shell(
        "from chat.models import Run\n"
        f"Run.objects.filter(conversation_id={conversation_id}).update("
        "status='failed', stop_reason='error', error='worker_lost: the process stopped.')"
    )
    page.reload()
    failed = page.locator("#run-status .run-failed")
    expect(failed).to_contain_text("could not answer")
    expect(failed.locator("details")).to_contain_text("worker_lost")  # codes in a disclosure
    first_run = failed.get_attribute("data-run")
    failed.get_by_role("button", name="Retry").click()
    expect(page.locator("#run-status .run-failed")).to_have_count(0, timeout=TIMEOUT)
    count = server.shell(
        f"from chat.models import Run\nprint(Run.objects.filter(conversation_id={conversation_id}).count())"
    )
    assert count.strip().splitlines()[-1] == "2"
    assert first_run
    expect(page.locator("#messages .msg-user")).to_have_count(1)


def test_retry_after_stop_replaces_the_stopped_turn(browser, page, server):
    """Bug 7: Retry after Stop replaces the stopped turn instead of adding a second copy
    (in the page at once, in another open tab, after a reload, and in what the model
    reads)."""
    conversation_id = new_conversation(page, server, agent="echo", title="Stopped turn")
    page.fill("#id_content", "Count to three")
    page.click("#composer button[type=submit]")
    expect(page.locator("#messages .msg-assistant")).to_contain_text("Echo: Count to three")
    # the person stopped it after its reply began (what Stop leaves behind stays visible)
    server.shell(
        "from chat.models import Run\n"
        f"Run.objects.filter(conversation_id={conversation_id}).update("
        "status='cancelled', stop_reason='cancelled')"
    )
    page.reload()
    stopped = page.locator("#run-status .run-cancelled")
    expect(stopped).to_contain_text("You stopped the assistant.")
    old_reply = page.locator("#messages .msg-assistant").get_attribute("id")
    other_ctx = browser.new_context(locale="en-US")
    other = other_ctx.new_page()
    login(other, server)
    other.goto(f"{server.url}/conversations/{conversation_id}/")
    expect(other.locator(f"#{old_reply}")).to_have_count(1)
    stopped.get_by_role("button", name="Retry").click()
    expect(page.locator("#run-status .run-cancelled")).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator("#messages .msg-assistant")).to_have_count(1, timeout=TIMEOUT)
    expect(page.locator("#messages .msg-assistant")).to_contain_text("Echo: Count to three")
    # the other tab drops the stopped reply live and shows the retry's, once
    new_reply = f"#messages .msg-assistant:not(#{old_reply})"
    expect(other.locator(new_reply)).to_contain_text("Echo: Count to three", timeout=TIMEOUT)
    expect(other.locator(f"#{old_reply}")).to_have_count(0, timeout=TIMEOUT)
    expect(other.locator("#messages .msg-assistant")).to_have_count(1)
    other_ctx.close()
    page.reload()
    expect(page.locator("#messages .msg-assistant")).to_have_count(1)
    expect(page.locator("#messages .msg-user")).to_have_count(1)
