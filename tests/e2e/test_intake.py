"""The intake agent end to end in a real browser: click, free text, skip, slider, dropdown,
the live state panel, and confirming the summary's inline questionnaire."""

from __future__ import annotations

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.e2e.conftest import htmx_request, new_conversation, start_from_home


def _start(page, server, intake="knee"):
    start_from_home(page, server, agent="intake", intake=intake)


def _open_ask(page, field):
    return page.locator(f'.ask[data-field="{field}"]:not(.ask-closed)')


def test_knee_intake_end_to_end(page, server):
    _start(page, server)
    knee = _open_ask(page, "knee_side")
    expect(knee.locator("button.ask-option")).to_have_count(3)
    # "Why we ask": the slot's knowledge reference, a closed disclosure under the widget
    why = page.locator('details.ask-reference[data-field="knee_side"]')
    expect(why.locator("summary")).to_have_text("Why we ask")
    expect(why.get_by_text("Why the side matters")).to_be_hidden()
    why.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(why.get_by_text("Why the side matters")).to_be_visible()
    expect(why).to_contain_text("Clinic intake guide (written for this app)")
    # click
    knee.get_by_role("button", name="Left knee").click()
    expect(page.locator('.ask[data-field="knee_side"] .is-chosen')).to_contain_text("Left knee")
    expect(page.locator('#state-panel [data-field="knee_side"]')).to_contain_text("100% sure")
    expect(why).to_have_attribute("open", "")  # still open after its widget refreshed
    # free text in the "other" entry, read as an option
    pain = _open_ask(page, "pain_level")
    pain.get_by_label("Or in your own words").fill("only a little")
    pain.get_by_label("Or in your own words").press("Enter")
    expect(page.locator('#state-panel [data-field="pain_level"]')).to_contain_text("Mild pain")
    expect(page.locator('#state-panel [data-field="pain_level"]')).to_contain_text("only a little")
    # slider: keyboard moves it, the shown value follows
    slider = _open_ask(page, "pain_score").locator('input[type="range"]')
    expect(slider).to_be_visible()
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(_open_ask(page, "pain_score").locator("output")).to_have_text("7")
    _open_ask(page, "pain_score").get_by_role("button", name="Send", exact=True).click()
    expect(page.locator('#state-panel [data-field="pain_score"]')).to_contain_text("7")
    # dropdown (6 options)
    duration = _open_ask(page, "duration")
    duration.locator("select").select_option("1_3m")
    duration.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator('#state-panel [data-field="duration"]')).to_contain_text("1–3 months")
    # yes/no and skip
    _open_ask(page, "swelling").get_by_role("button", name="Skip").click()
    expect(page.locator('#state-panel [data-field="swelling"]')).to_contain_text("Skipped")
    _open_ask(page, "injury").get_by_role("button", name="No injury").click()
    # a slot asked later (live, after message_done) has its disclosure too
    notes_why = page.locator('details.ask-reference[data-field="notes"]')
    notes_why.locator("summary").click()
    expect(notes_why).to_contain_text("locks or catches")
    notes = _open_ask(page, "notes")
    notes.locator('input[name="text"]').fill("worse on stairs")
    notes.get_by_role("button", name="Send").click()
    # summary with an inline questionnaire; confirm it
    summary = page.locator(".msg-assistant", has_text="Here is what you told me")
    expect(summary).to_contain_text("Here is what you told me")
    expect(summary).to_contain_text("worse on stairs")
    summary.get_by_label("Yes, that's correct").check()  # nothing is chosen for the person
    summary.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator(".msg-assistant", has_text="confirmed and recorded")).to_be_visible()
    expect(page.locator("#state-panel")).to_contain_text("Confirmed")
    assert page.dialogs == []


def test_panel_edit_and_second_tab_locks(browser, page, server):
    _start(page, server, intake="project_kickoff")
    cid = int(page.url.rstrip("/").split("/")[-1])
    other_ctx = browser.new_context(locale="en-US")
    other = other_ctx.new_page()
    from tests.e2e.conftest import login

    login(other, server)
    other.goto(f"{server.url}/conversations/{cid}/")
    expect(_open_ask(other, "project_type")).to_be_visible()
    other.wait_for_timeout(300)
    _open_ask(page, "project_type").locator("select").select_option("website")
    _open_ask(page, "project_type").get_by_role("button", name="Send", exact=True).click()
    # the other tab's widget locks and its panel updates live
    expect(other.locator('.ask[data-field="project_type"] .is-chosen')).to_contain_text("Website")
    expect(other.locator('#state-panel [data-field="project_type"]')).to_contain_text("Website")
    # edit the slot from the panel
    row = page.locator('#state-panel [data-field="project_type"]')
    row.locator("summary").click()
    row.locator("select").select_option("research")
    row.get_by_role("button", name="Save").click()
    expect(other.locator('#state-panel [data-field="project_type"]')).to_contain_text("Research")
    other_ctx.close()


def test_no_js_answers(browser, server):
    ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    page = ctx.new_page()
    from tests.e2e.conftest import login

    login(page, server)
    _start(page, server)  # (the first turn runs within the request: the page has its asks)
    _open_ask(page, "knee_side").get_by_role("button", name="Right knee").click()
    page.wait_for_url("**/conversations/*/")
    expect(page.locator('#state-panel [data-field="knee_side"]')).to_contain_text("Right knee")
    ctx.close()


def test_echo_conversations_have_no_panel(page, server):
    new_conversation(page, server, agent="echo")
    expect(page.locator("#state-panel")).to_have_count(0)


def test_a_stale_tab_answering_an_answered_question_says_so_and_closes_it(page, server, context):
    """Bug 1: a tab without its live stream answers a question another tab answered: it
    says so on the card (not a silent 409), and the card shows the answer that counts."""
    page.route("**/events*", lambda route: route.abort())  # this tab hears nothing live
    _start(page, server)
    cid = int(page.url.rstrip("/").split("/")[-1])
    other = context.new_page()
    other.goto(f"{server.url}/conversations/{cid}/")
    _open_ask(other, "knee_side").get_by_role("button", name="Left knee").click()
    expect(other.locator('.ask[data-field="knee_side"]')).to_have_attribute(
        "data-state", "answered"
    )
    stale = page.locator('.ask[data-field="knee_side"]')
    expect(stale).to_have_attribute("data-state", "open")
    stale.get_by_role("button", name="Right knee").click()
    expect(stale).to_have_attribute("data-state", "answered")
    alert = stale.get_by_role("alert")
    expect(alert).to_be_visible()
    expect(alert).to_be_focused()
    # no further Send can fail the same way: the refused answer form is gone; the folded
    # card's "Change answer" (issue 27) amends the answer that counts, and stays closed
    expect(stale.locator("form.qcard-form")).to_have_count(0)
    expect(stale.locator(".ask-change form")).to_be_hidden()
    expect(stale.locator(".is-chosen")).to_contain_text("Left knee")


def test_free_words_fill_the_scale_and_a_late_edit_refreshes_the_summary(page, server):
    """Issue 32, defect 12: "it hurts a bit, maybe 4 out of 10" is *Mild pain* ("Please
    check"), and the 0–10 score is asked with its slider at 4 (their words beside it), not
    answered for them; editing a slot once the summary is shown updates that summary in
    place (issue 32 #9)."""
    _start(page, server)
    _open_ask(page, "knee_side").get_by_role("button", name="Left knee").click()
    pain = _open_ask(page, "pain_level")
    said = "it hurts a bit, maybe 4 out of 10"
    pain.get_by_label("Or in your own words").fill(said)
    pain.get_by_label("Or in your own words").press("Enter")
    level = page.locator('#state-panel [data-field="pain_level"]')
    expect(level).to_contain_text("Mild pain")
    expect(level).to_contain_text("Please check")
    score = _open_ask(page, "pain_score")
    expect(score.locator("input[type=range]")).to_have_value("4")
    expect(score.locator(".ask-start")).to_contain_text(said)
    expect(page.locator('#state-panel [data-field="pain_score"]')).not_to_contain_text("4")
    score.get_by_role("button", name="Send", exact=True).click()
    row = page.locator('#state-panel [data-field="pain_score"]')
    expect(row).to_contain_text("4")
    expect(row).not_to_contain_text("Please check")
    # on to the summary
    duration = _open_ask(page, "duration")
    duration.locator("select").select_option("1_3m")
    duration.get_by_role("button", name="Send", exact=True).click()
    for field in ("swelling", "injury", "notes"):
        _open_ask(page, field).get_by_role("button", name="Skip").click()
        expect(page.locator(f'.ask[data-field="{field}"]')).to_have_attribute(
            "data-state", "answered"
        )
    summaries = page.locator(".msg-assistant", has_text="Here is what you told me")
    expect(summaries).to_have_count(1)
    expect(summaries.first).to_contain_text("1–3 months")
    row = page.locator('#state-panel [data-field="duration"]')
    row.locator("summary").click()
    row.locator("select").select_option("gt_1y")
    row.get_by_role("button", name="Save").click()
    expect(summaries.first).to_contain_text("More than a year")  # the same summary, updated
    expect(summaries).to_have_count(1)
    expect(summaries.first.locator("section.qcard")).to_have_attribute(
        "data-card-mode", "interactive"
    )


def test_an_edit_in_the_panel_survives_a_live_refresh_of_the_panel(page, server):
    """The panel is refreshed live (an answer, another tab's edit, the next question): while
    the person edits a slot, the refresh waits — nothing is replaced under the cursor (a
    Save pressed during a swap was lost), what they chose and focus stay — and it comes
    once the edit is closed."""
    _start(page, server)
    _open_ask(page, "knee_side").get_by_role("button", name="Left knee").click()
    row = page.locator('#state-panel [data-field="knee_side"]')
    expect(row).to_contain_text("Left knee")
    row.locator("summary").click()
    row.locator("select").select_option(label="Right knee")
    row.locator("select").focus()
    page.evaluate(  # mark the panel as it is before the refresh
        "document.querySelector('#state-panel [data-field=knee_side] select').dataset.old = '1'"
    )
    htmx_request(page, "state-panel", "sse:consultation_state_patch")
    expect(row.locator("select[data-old]")).to_have_count(1)  # held: not replaced
    expect(row.locator("details.state-edit")).to_have_attribute("open", "")
    expect(row.locator("select option:checked")).to_have_text("Right knee")
    expect(row.locator("select")).to_be_focused()
    # Closed without saving: the held refresh comes (a fresh panel, the answer unchanged).
    with page.expect_response(lambda r: r.url.endswith("/state")):
        row.locator("summary").click()
    expect(row.locator("select[data-old]")).to_have_count(0)
    expect(row).to_contain_text("Left knee")
    # Saved while a refresh was held: the Save's response is the panel as it now stands.
    row.locator("summary").click()
    row.locator("select").select_option(label="Right knee")
    page.evaluate("htmx.trigger('#state-panel', 'sse:consultation_state_patch')")
    row.get_by_role("button", name="Save").click()
    expect(row.locator(".state-value")).to_have_text("Right knee")
    expect(row.locator("details.state-edit")).not_to_have_attribute("open", "")


def _to_summary(page, server):
    """The project kickoff intake answered (or skipped) question by question up to its
    summary card; returns the summary message."""
    _start(page, server, intake="project_kickoff")
    summary = page.locator("article.msg-assistant", has_text="Here is the kickoff brief")
    open_ask = ".ask:not(.ask-closed):not([hidden])"
    for _ in range(40):
        # whichever comes next: the summary, or the next question
        page.locator(f"{open_ask}, section.qcard[data-questionnaire-id]").first.wait_for()
        if summary.count():
            break
        ask = page.locator(open_ask).first
        try:  # (a copy of a message fetched twice may show for a moment, then go)
            field = ask.get_attribute("data-field", timeout=5_000)
        except PlaywrightTimeout:
            continue
        if ask.locator("button.ask-option").count():
            ask.locator("button.ask-option").first.click()
        elif ask.locator("select").count():
            ask.locator("select").select_option(index=2)
            ask.locator("button.ask-choose").click()
        else:
            ask.locator("button.ask-skip").click()
        expect(page.locator(f'.ask[data-field="{field}"]')).to_have_attribute(
            "data-state", "answered"
        )
    expect(summary).to_have_count(1)
    return summary


def test_the_summary_card_asks_only_what_it_shows_and_chooses_nothing(page, server):
    """Issue 32 #3: one question, nothing preselected (a person must act), and the bubble
    lists only that question."""
    summary = _to_summary(page, server)
    card = summary.locator("section.qcard")
    expect(card.locator("fieldset.qcard-q")).to_have_count(1)
    expect(card.locator("input[type=radio]:checked")).to_have_count(0)
    card.get_by_role("button", name="Send", exact=True).click()
    expect(card.locator(".qcard-field-error")).to_be_visible()  # refused: nothing chosen
    expect(page.locator("article.msg-user .qanswer")).to_have_count(0)
    summary.locator("section.qcard").get_by_label("Yes, that's correct").check()
    summary.locator("section.qcard").get_by_role("button", name="Send", exact=True).click()
    bubble = page.locator("article.msg-user .qanswer").last
    expect(bubble).to_contain_text("Is this brief correct?")
    expect(bubble).to_contain_text("Yes, that's correct")
    expect(bubble).not_to_contain_text("Which answers should change")
    expect(
        page.locator(".msg-assistant", has_text="the kickoff brief is confirmed")
    ).to_be_visible()


def test_declining_the_summary_says_so_ends_it_and_the_card_can_still_be_confirmed(page, server):
    """Issue 32 #1 and #14: the bubble says the person declined; the assistant does not
    post the same card again but says how to confirm later; the declined card's Change
    answer reopens it answerable (no "I'd rather not answer" the server would refuse)."""
    summary = _to_summary(page, server)
    summary.locator("section.qcard button[value=decline]").click()
    bubble = page.locator("article.msg-user .qanswer").last
    expect(bubble).to_contain_text("Confirm the kickoff brief")
    expect(bubble.locator("[data-declined]")).to_have_text("I’d rather not answer")
    expect(page.locator(".msg-assistant", has_text="the brief is not confirmed")).to_be_visible()
    expect(page.locator("#state-panel")).to_contain_text("Not confirmed")
    page.reload()
    summaries = page.locator("article.msg-assistant", has_text="Here is the kickoff brief")
    expect(summaries).to_have_count(1)
    expect(page.locator("article.msg-user .qanswer [data-declined]")).to_have_count(1)
    card = summaries.locator("section.qcard")
    card.locator("summary.qcard-head").click()
    card.get_by_role("link", name="Change answer").click()
    reopened = summaries.locator("section.qcard")
    expect(reopened).to_contain_text("Changing your answer")
    expect(reopened.locator("button[value=decline]")).to_have_count(0)
    reopened.get_by_label("Yes, that's correct").check()
    reopened.get_by_role("button", name="Send the change").click()
    expect(
        page.locator(".msg-assistant", has_text="the kickoff brief is confirmed")
    ).to_be_visible()
    expect(page.locator("#state-panel")).to_contain_text("Confirmed")
    expect(summaries).to_have_count(1)


def test_a_panel_edit_updates_the_open_summary_in_place_in_every_tab(page, server, context):
    """Issue 32 #9: editing a slot while the summary waits re-renders that summary (live
    in both tabs, the same after a reload), never a second summary."""
    summary = _to_summary(page, server)
    other = context.new_page()
    other.goto(page.url)
    other_summaries = other.locator("article.msg-assistant", has_text="Here is the kickoff brief")
    expect(other_summaries).to_have_count(1)
    summary_id = summary.get_attribute("id")
    for label in ("Research", "Website"):
        row = page.locator('#state-panel [data-field="project_type"]')
        row.locator("summary").click()
        row.locator("select").select_option(label=label)
        row.get_by_role("button", name="Save").click()
        for tab in (page, other):
            shown = tab.locator("article.msg-assistant", has_text="Here is the kickoff brief")
            expect(shown).to_have_count(1)
            expect(shown).to_contain_text(f"Project type: {label}")
            expect(shown).to_have_attribute("id", summary_id)
            expect(shown.locator("section.qcard")).to_have_attribute(
                "data-card-mode", "interactive"
            )
    other.reload()
    expect(other_summaries).to_have_count(1)
    expect(other_summaries).to_contain_text("Project type: Website")
    other.close()
