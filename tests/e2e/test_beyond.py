"""Issue 27 in a real browser: change an answer (two tabs at once: one wins, the other
sees the new version), decline a card, skip a question, keep a default."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.e2e.conftest import login
from tests.e2e.test_cards import card, open_with_card


def last_envelope(server, cid: int) -> dict:
    out = server.shell(
        "from chat.models import Message\n"
        f"m = Message.objects.filter(conversation_id={cid}, role='user').order_by('-seq')[0]\n"
        "print(m.content)"
    )
    body = out.strip().splitlines()[-1]
    return json.loads(body.split(">", 1)[1].rsplit("</", 1)[0])


def test_keep_a_default_and_skip_a_question(page, server):
    cid, mid = open_with_card(page, server)
    c = card(page, mid)
    c.get_by_label("Skip this question").last.check()  # "Anything else?"
    c.get_by_role("button", name="Send", exact=True).click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    expect(card(page, mid)).to_contain_text("Skipped")
    answer = page.locator(".msg-user .qanswer").last
    expect(answer).to_contain_text("Paris (kept the default)")
    envelope = last_envelope(server, cid)
    assert [a["provenance"] for a in envelope["answers"]] == ["default", "default", "skipped"]


def test_decline_a_card(page, server):
    cid, mid = open_with_card(page, server)
    card(page, mid).get_by_role("button", name="I’d rather not answer").click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    expect(card(page, mid)).to_contain_text("Declined")
    expect(card(page, mid).locator("fieldset")).to_have_count(0)  # locked: nothing to fill in
    envelope = last_envelope(server, cid)
    assert envelope["status"] == "declined" and envelope["answers"] == []


def test_change_an_answer_in_two_tabs_at_once(browser, page, server):
    cid, mid = open_with_card(page, server)
    card(page, mid).get_by_role("button", name="Send", exact=True).click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    other_ctx = browser.new_context(locale="en-US")
    other = other_ctx.new_page()
    # The other tab hears nothing live, so its change always goes out and meets the 409
    # (with the stream, the winning version could replace its card between a check for
    # its Send button and the click; live updates across tabs: test_cards.py).
    other.route("**/events*", lambda route: route.abort())
    login(other, server)
    other.goto(f"{server.url}/conversations/{cid}/")
    for tab in (page, other):  # both unfold the answered card and reopen it, answer filled in
        card(tab, mid).locator("summary.qcard-head").click()
        card(tab, mid).get_by_role("link", name="Change answer").click()
        expect(card(tab, mid)).to_have_attribute("data-card-mode", "interactive")
        expect(card(tab, mid).get_by_label("Paris", exact=True)).to_be_checked()
    card(page, mid).get_by_label("Rome").check()
    card(other, mid).get_by_label("Other", exact=True).check()
    card(other, mid).get_by_label("Other answer to: Where to?").fill("Oslo")
    card(page, mid).get_by_role("button", name="Send the change").click()
    expect(card(page, mid)).to_have_attribute("data-card-mode", "answered")
    expect(page.locator(".msg-user").last).to_contain_text("Rome (changed)")
    # the other tab: its change of version 1 is stale (409): it ends on the winning
    # version, nothing of it was posted
    card(other, mid).get_by_role("button", name="Send the change").click()
    expect(card(other, mid)).to_have_attribute("data-card-mode", "answered")
    expect(card(other, mid).get_by_label("Rome")).to_be_checked()
    expect(card(other, mid)).to_contain_text("Changed")
    envelope = last_envelope(server, cid)
    assert envelope["version"] == 2 and envelope["answers"][0]["provenance"] == "amended"
    out = server.shell(
        "from questionnaires.models import Submission\n"
        f"print(list(Submission.objects.filter(conversation_id={cid}).values_list('version', flat=True)))"
    )
    assert out.strip().splitlines()[-1] == "[1, 2]"
    # the earlier answer is one click away
    card(page, mid).locator("summary.qcard-head").click()
    card(page, mid).locator("summary", has_text="Earlier answer").click()
    expect(card(page, mid).locator(".qcard-earlier")).to_contain_text("Paris")
    other_ctx.close()
