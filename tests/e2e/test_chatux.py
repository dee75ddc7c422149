"""A chat people enjoy: nothing typed is lost, the view follows the conversation.

One test per reported bug (issue "A chat people enjoy"), each written to fail first.
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import login, new_conversation, start_from_home
from tests.support.asking import TRIP

TIMEOUT = 30_000  # generous: a busy CI box delivers live updates late; only a failure waits


def shell_int(server, code: str) -> int:
    return int(server.shell(code).strip().splitlines()[-1])


def post_assistant(server, cid: int, content: str) -> int:
    return shell_int(
        server,
        "from chat.models import Conversation\n"
        "from chat.core.services import message_create\n"
        f"c = Conversation.objects.get(pk={cid})\n"
        f"print(message_create(conversation=c, role='assistant', content={content!r}).pk)",
    )


def start_working_run(server, cid: int) -> int:
    """A run that stays "running" until `finish_run` (as a slow model would)."""
    return shell_int(
        server,
        "from django.utils import timezone\n"
        "from chat.models import Conversation, Run\n"
        "from chat.core.services import event_emit\n"
        f"c = Conversation.objects.get(pk={cid})\n"
        "r = Run.objects.create(conversation=c, status='running', started_at=timezone.now(),"
        " heartbeat_at=timezone.now())\n"
        "event_emit(conversation_id=c.pk, name='run_started', data={'run_id': r.pk})\n"
        "print(r.pk)",
    )


def finish_run(server, cid: int, run_id: int, reply: str) -> None:
    server.shell(
        "from chat.models import Conversation, Run\n"
        "from chat.core.services import event_emit, message_create\n"
        f"c = Conversation.objects.get(pk={cid})\n"
        f"message_create(conversation=c, role='assistant', content={reply!r})\n"
        f"Run.objects.filter(pk={run_id}).update(status='finished', stop_reason='completed')\n"
        f"event_emit(conversation_id=c.pk, name='run_finished', data={{'run_id': {run_id}, "
        "'stop_reason': 'completed', 'status': 'finished'})\n",
    )


def in_view(page, selector: str) -> bool:
    return page.evaluate(
        """(sel) => { const el = document.querySelector(sel); if (!el) return false;
        const r = el.getBoundingClientRect();
        return r.bottom > 0 && r.top < window.innerHeight; }""",
        selector,
    )


# --- bug 1: a turn never reloads an open tab ---------------------------------------------


def test_a_running_turn_never_reloads_the_tab(page, server):
    cid = new_conversation(page, server, title="No reload")
    page.wait_for_timeout(300)  # the event stream connects
    page.evaluate("window.qcNotReloaded = true")
    page.fill("#id_content", "half a thought")
    run_id = start_working_run(server, cid)
    expect(page.locator("#run-status")).to_contain_text("working", timeout=TIMEOUT)
    page.wait_for_timeout(3500)  # the old <meta refresh> fired after 2 s
    assert page.evaluate("window.qcNotReloaded === true"), "the tab reloaded itself"
    expect(page.locator("#id_content")).to_have_value("half a thought")
    finish_run(server, cid, run_id, "All done")
    expect(page.locator("#messages")).to_contain_text("All done", timeout=TIMEOUT)
    expect(page.locator("#id_content")).to_have_value("half a thought")


# --- bug 2: without JavaScript the page follows the turn to its end ----------------------


def test_without_javascript_the_page_follows_a_turn_after_a_card_submit(browser, server):
    ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    page = ctx.new_page()
    login(page, server)
    cid = new_conversation(page, server, title="no js follow")
    mid = post_assistant(server, cid, TRIP)
    run_id = start_working_run(server, cid)
    # where a card submit redirects to: the page, anchored at the new message
    page.goto(f"{server.url}/")
    page.goto(f"{server.url}/conversations/{cid}/#msg-{mid}")
    expect(page.locator("#run-status")).to_contain_text("working")
    finish_run(server, cid, run_id, "Reply after the card")
    expect(page.locator("#messages")).to_contain_text("Reply after the card", timeout=TIMEOUT)
    expect(page.locator("#run-status")).not_to_contain_text("working", timeout=TIMEOUT)
    ctx.close()


def test_without_javascript_the_working_page_refreshes_but_an_idle_one_does_not(browser, server):
    ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    page = ctx.new_page()
    login(page, server)
    cid = new_conversation(page, server, title="no js idle")
    assert page.locator('meta[http-equiv="refresh"]').count() == 0
    run_id = start_working_run(server, cid)
    page.reload()
    assert page.locator('meta[http-equiv="refresh"]').count() == 1
    finish_run(server, cid, run_id, "done")
    ctx.close()


# --- bug 3: the view follows the conversation ---------------------------------------------


def _long_conversation(page, server, n: int = 24) -> int:
    cid = new_conversation(page, server, title="Long")
    server.shell(
        "from chat.models import Conversation\n"
        "from chat.core.services import message_create\n"
        f"c = Conversation.objects.get(pk={cid})\n"
        f"for i in range({n}):\n"
        "    message_create(conversation=c, role='user' if i % 2 else 'assistant',"
        " content=f'Line {i}\\n\\n' + 'text ' * 60)\n"
    )
    page.reload()
    return cid


def test_a_conversation_opens_at_its_latest_message_and_follows_new_ones(page, server):
    _long_conversation(page, server)
    last = page.locator("#messages article").last
    expect(last).to_contain_text("Line 23")
    expect(last).to_be_in_viewport()
    page.fill("#id_content", "follow me")
    page.keyboard.press("Enter")
    reply = page.locator("article.msg-assistant", has_text="Echo: follow me")
    expect(reply).to_be_visible(timeout=TIMEOUT)
    expect(reply).to_be_in_viewport()


def test_scrolled_up_reader_gets_a_new_messages_pill(page, server):
    cid = _long_conversation(page, server)
    page.wait_for_timeout(300)
    first = page.locator("#messages article").first
    first.scroll_into_view_if_needed()
    expect(first).to_be_in_viewport()
    post_assistant(server, cid, "Something new below")
    newest = page.locator("article", has_text="Something new below")
    expect(newest).to_have_count(1, timeout=TIMEOUT)
    pill = page.get_by_role("button", name="New messages")
    expect(pill).to_be_visible()
    expect(first).to_be_in_viewport()  # the reader was not moved
    pill.click()
    expect(newest).to_be_in_viewport()
    expect(pill).to_be_hidden()


def test_new_cards_are_announced_without_moving_focus_while_typing(page, server):
    cid = new_conversation(page, server, title="Announce")
    page.wait_for_timeout(300)
    page.click("#id_content")
    page.keyboard.type("I am typi")
    post_assistant(server, cid, TRIP)
    expect(page.locator("#messages .qcard")).to_be_visible(timeout=TIMEOUT)
    page.keyboard.type("ng")
    expect(page.locator("#id_content")).to_be_focused()
    expect(page.locator("#id_content")).to_have_value("I am typing")
    expect(page.locator("#qc-announcer")).to_contain_text("New questionnaire")


# --- composer drafts ----------------------------------------------------------------------


def test_a_composer_draft_survives_a_full_turn_and_a_reload(browser, page, server):
    cid = new_conversation(page, server, title="Drafts")
    page.wait_for_timeout(300)
    page.fill("#id_content", "a long draft\nwith two lines")
    # a full turn, started from another tab
    other_ctx = browser.new_context(locale="en-US")
    other = other_ctx.new_page()
    login(other, server)
    other.goto(f"{server.url}/conversations/{cid}/")
    other.fill("#id_content", "from the other tab")
    other.keyboard.press("Enter")
    expect(page.locator("#messages")).to_contain_text("Echo: from the other tab", timeout=TIMEOUT)
    expect(page.locator("#id_content")).to_have_value("a long draft\nwith two lines")
    page.reload()
    expect(page.locator("#id_content")).to_have_value("a long draft\nwith two lines")
    # sending clears the draft for good
    page.click("#composer button[type=submit]")
    expect(page.locator("#messages")).to_contain_text("Echo: a long draft", timeout=TIMEOUT)
    page.reload()
    expect(page.locator("#id_content")).to_have_value("")
    other_ctx.close()


# --- bug 5: each intake answer sits right after its question ------------------------------


def _start_intake(page, server, intake: str = "knee") -> int:
    return start_from_home(page, server, agent="intake", intake=intake)


ORDER = """() => Array.from(document.querySelectorAll('#messages > article')).map(a =>
  a.classList.contains('msg-user') ? 'A:' + a.textContent.trim().replace(/\\s+/g, ' ')
  : (a.querySelector('.ask') ? 'Q:' + a.querySelector('.ask').dataset.field : 'T'))"""


def test_intake_answers_sit_right_after_their_question(page, server):
    _start_intake(page, server)
    page.locator('.ask[data-field="knee_side"]').get_by_role("button", name="Left knee").click()
    expect(page.locator('.ask[data-field="knee_side"][data-state="answered"]')).to_be_visible()
    expect(page.locator("#messages > article.msg-user")).to_have_count(1)
    order = [o for o in page.evaluate(ORDER) if o != "T"]
    assert order[:3] == ["Q:knee_side", "A:You Left knee", "Q:pain_level"] or (
        order[0] == "Q:knee_side" and order[1].startswith("A:") and order[2] == "Q:pain_level"
    ), order
    ask = page.locator('.ask[data-field="pain_level"]:not(.ask-closed)')
    ask.get_by_role("button", name="Skip").click()
    expect(page.locator("#messages > article.msg-user")).to_have_count(2)
    # The next turn's questions (any open ask would do before the skip's lock arrives).
    expect(page.locator('.ask[data-field="duration"]')).to_have_count(1, timeout=TIMEOUT)
    live = [o for o in page.evaluate(ORDER) if o != "T"]
    page.reload()
    reloaded = [o for o in page.evaluate(ORDER) if o != "T"]
    assert live == reloaded, (live, reloaded)
    for index, entry in enumerate(reloaded):
        if entry.startswith("A:"):
            assert reloaded[index - 1].startswith("Q:"), reloaded
    assert reloaded[2] == "Q:pain_level" and reloaded[3].startswith("A:"), reloaded
    # a skip posts a short line, not the whole question again
    assert "come with pain" not in reloaded[3] and "Skipped" in reloaded[3], reloaded


# --- bug 6: keyboard answers keep focus where the next answer goes ------------------------


def test_enter_on_an_option_moves_focus_to_the_next_question(page, server):
    cid = _start_intake(page, server)
    page.locator('.ask[data-field="knee_side"]').get_by_role("button", name="Left knee").focus()
    page.keyboard.press("Enter")
    expect(page.locator('.ask[data-field="knee_side"][data-state="answered"]')).to_be_visible()
    # (a locator, not wait_for_function: the page's CSP forbids eval)
    expect(page.locator('.ask[data-field="pain_level"]:focus-within')).to_have_count(1)
    # answering the last open question: focus follows to the next question when it arrives
    page.keyboard.press("Tab")  # "Mild pain"
    page.keyboard.press("Enter")
    # (a locator, not wait_for_function: the page's CSP forbids eval)
    expect(page.locator('.ask[data-field="pain_score"]:focus-within')).to_have_count(
        1, timeout=TIMEOUT
    )
    # ... but never steals it while the person types elsewhere
    page.click("#id_content")
    page.keyboard.type("typing here")
    server.shell(
        "from chat.models import Conversation\n"
        "from questionnaires.asks.services import ask_create\n"
        f"c = Conversation.objects.get(pk={cid})\n"
        "ask_create(conversation=c, payload={'question': 'Extra?', 'field': 'extra',"
        " 'options': [{'label': 'A', 'value': 'a'}, {'label': 'B', 'value': 'b'}]})\n"
    )
    expect(page.locator('.ask[data-field="extra"]')).to_be_visible(timeout=TIMEOUT)
    page.keyboard.type("!")
    expect(page.locator("#id_content")).to_be_focused()
    expect(page.locator("#id_content")).to_have_value("typing here!")


# --- bug 7: a stale tab catches up after a refusal ----------------------------------------


def test_a_stale_tab_shows_the_accepted_answer_and_the_newer_messages(page, server, context):
    page.route("**/events*", lambda route: route.abort())  # this tab hears nothing live
    cid = new_conversation(page, server, title="Stale")
    mid = post_assistant(server, cid, TRIP)
    page.reload()
    card = page.locator(f"#msg-{mid} .qcard")
    expect(card).to_have_attribute("data-card-mode", "interactive")
    other = context.new_page()
    other.goto(f"{server.url}/conversations/{cid}/")
    other.locator(f"#msg-{mid} .qcard").get_by_label("Rome").check()
    other.locator(f"#msg-{mid} .qcard").get_by_role("button", name="Send", exact=True).click()
    expect(other.locator(f"#msg-{mid} .qcard")).to_have_attribute("data-card-mode", "answered")
    expect(other.locator("article.msg-assistant").last).to_contain_text("Echo", timeout=TIMEOUT)
    # the stale tab still offers the card; its submit is refused ...
    card.get_by_label("Paris").check()
    card.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator(f"#msg-{mid}").get_by_role("alert")).to_have_attribute(
        "data-error-code", "questionnaire_already_submitted"
    )
    # Bug 2: the notice is where the person is looking (under the card, focused, in view)
    notice = page.locator(f"#msg-{mid} .msg-notice")
    expect(notice).to_be_focused()
    assert in_view(page, f"#msg-{mid} .msg-notice")
    card = page.locator(f"#msg-{mid} .qcard")
    # ... and it shows what was accepted, plus everything that followed
    expect(card).to_have_attribute("data-card-mode", "answered")
    expect(card.get_by_label("Rome")).to_be_checked()
    expect(card.get_by_label("Paris")).not_to_be_checked()
    expect(page.locator("article.msg-user .qanswer")).to_contain_text("Rome", timeout=TIMEOUT)
    expect(page.locator("article.msg-assistant").last).to_contain_text("Echo", timeout=TIMEOUT)


def test_a_stale_tab_refused_as_not_latest_loads_what_superseded_it(page, server):
    page.route("**/events*", lambda route: route.abort())
    cid = new_conversation(page, server, title="Stale 2")
    mid = post_assistant(server, cid, TRIP)
    page.reload()
    post_assistant(server, cid, "A newer question came in")
    card = page.locator(f"#msg-{mid} .qcard")
    card.locator("textarea").fill("keep me")
    card.get_by_role("button", name="Send", exact=True).click()
    alert = page.locator(f"#msg-{mid} .qcard").get_by_role("alert")
    expect(alert).to_have_attribute("data-error-code", "questionnaire_not_latest")
    expect(page.locator(f"#msg-{mid} .qcard textarea")).to_have_value("keep me")
    expect(page.locator("#messages")).to_contain_text("A newer question came in", timeout=TIMEOUT)


# --- bug 8: small things that made it look unfinished ------------------------------------


def test_a_turn_logs_no_console_errors(page, server):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    _start_intake(page, server)
    page.locator('.ask[data-field="knee_side"]').get_by_role("button", name="Left knee").click()
    page.locator('.ask[data-field="pain_level"]:not(.ask-closed)').get_by_role(
        "button", name="Mild pain"
    ).click()
    expect(page.locator('.ask[data-field="pain_score"]')).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(500)
    assert errors == [], errors


def test_free_text_answers_keep_their_line_breaks(page, server):
    cid = new_conversation(page, server, title="Lines")
    mid = post_assistant(server, cid, TRIP)
    page.reload()
    card = page.locator(f"#msg-{mid} .qcard")
    card.locator("textarea").fill("first line\nsecond line")
    card.get_by_role("button", name="Send", exact=True).click()
    answer = page.locator(".msg-user .qanswer dd").last
    expect(answer).to_have_text("first line\nsecond line", use_inner_text=True)


def test_the_playground_fits_360_px_and_shows_raw_text(browser, server):
    for width in (360, 1280):
        ctx = browser.new_context(viewport={"width": width, "height": 740}, locale="en-US")
        page = ctx.new_page()
        login(page, server)
        page.goto(server.url + "/questionnaires/playground/")
        page.fill("#pg-content", TRIP + "\n<questionnaire>{}</questionnaire>")
        page.click("#playground-form button[type=submit]")
        raw = page.locator(".pg-table .pg-raw details").nth(1)
        raw.locator("summary").click()
        expect(raw.locator("pre").first).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        box = raw.locator("pre").first.bounding_box()
        wrap = page.locator(".pg-table-wrap").bounding_box()
        assert box and wrap
        if width == 1280:  # the raw text column is not cut off
            assert box["x"] + box["width"] <= wrap["x"] + wrap["width"] + 1
        ctx.close()


def test_the_intake_summary_asks_what_to_change_only_when_asked(page, server):
    cid = _start_intake(page, server, intake="project_kickoff")
    for _ in range(10):
        if page.locator("section.qcard-interactive").count():
            break
        # The question open now (a queued one is hidden until its turn comes).
        ask = page.locator(".ask[data-state=open]:not([hidden])").first
        ask.wait_for(timeout=TIMEOUT)
        field = ask.get_attribute("data-field")
        # One Skip per question: wait for its answer before looking for the next question
        # (a second click on the same, still open question would skip it twice).
        ask.get_by_role("button", name="Skip").click()
        expect(page.locator(f'.ask[data-field="{field}"]').last).to_have_attribute(
            "data-state", "answered"
        )
        page.locator(
            ".ask[data-state=open]:not([hidden]), section.qcard-interactive"
        ).first.wait_for()
    card = page.locator("section.qcard-interactive")
    expect(card).to_be_visible(timeout=TIMEOUT)
    # The summary asks one thing, nothing chosen for the person (issue 32 #3): which
    # answers to change is a card of its own, asked only after "change" was chosen.
    expect(card.locator("fieldset.qcard-q")).to_have_count(1)
    expect(card.locator("input[type=radio]:checked")).to_have_count(0)
    qid = card.get_attribute("data-questionnaire-id")
    card.locator("fieldset.qcard-q label").nth(1).click()
    card.get_by_role("button", name="Send", exact=True).click()
    change = page.locator("section.qcard-interactive")
    expect(change).not_to_have_attribute("data-questionnaire-id", str(qid), timeout=TIMEOUT)
    expect(change.locator("fieldset.qcard-q")).to_have_count(1)
    expect(change.locator("input[type=checkbox]")).not_to_have_count(0)
    assert cid


def test_on_a_phone_the_sidebar_hides_behind_a_button_and_the_header_is_one_row(browser, server):
    ctx = browser.new_context(viewport={"width": 360, "height": 740}, locale="en-US")
    page = ctx.new_page()
    login(page, server)
    new_conversation(page, server, title="A rather long conversation title for a small phone")
    header = page.locator(".chat-header").bounding_box()
    assert header and header["height"] <= 56
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    sidebar = page.locator("#sidebar")
    expect(sidebar).not_to_be_in_viewport()
    page.get_by_role("link", name="Conversations").click()
    expect(sidebar).to_be_in_viewport()
    expect(sidebar.get_by_role("link", name="New chat")).to_be_focused()
    page.keyboard.press("Escape")
    expect(sidebar).not_to_be_in_viewport()
    ctx.close()
