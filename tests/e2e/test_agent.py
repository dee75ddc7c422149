"""Agents in a real browser: one without a model, failed and stopped turns (the Protocol
tour walked to its end: test_tour.py)."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import login, new_conversation

TIMEOUT = 30_000  # generous: a busy CI box delivers live updates late; only a failure waits


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
    expect(failed).to_contain_text("No model is connected")
    expect(failed.get_by_role("button", name="Retry")).to_have_count(0)
    expect(page.locator("#messages .msg-user")).to_contain_text("Are you there?")


def test_the_home_shows_the_chosen_agents_words_and_its_own_choices(page, server):
    # Which agent's words and choices show is CSS the registry writes (no JavaScript needed).
    page.goto(server.url + "/")
    expect(page.locator("[data-about=intake]")).to_be_visible()
    expect(page.locator("#id_intake")).to_be_visible()  # the intake's topic
    page.select_option("#id_agent", "scripted")
    expect(page.locator("[data-about=scripted]")).to_contain_text("A guided tour")
    expect(page.locator("[data-about=intake]")).to_be_hidden()
    expect(page.locator("#id_intake")).to_be_hidden()
    page.select_option("#id_agent", "intake")
    expect(page.locator("#id_intake")).to_be_visible()


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
