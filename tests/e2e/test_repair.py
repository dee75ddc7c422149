"""Conversation repair in a real browser (issue 36): typing the answer into the composer
answers the waiting card, words that contain one fill it for one click, a digression is
answered and the question is shown again below it — in English and Chinese."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import login, start_from_home


def _say(page, text):
    page.fill("#id_content", text)
    page.press("#id_content", "Enter")


def _open_ask(page, field):
    return page.locator(f'.ask[data-field="{field}"]:not(.ask-closed)')


def test_typing_the_label_answers_the_waiting_card(page, server):
    start_from_home(page, server, agent="intake", intake="trip")
    expect(_open_ask(page, "island")).to_contain_text("Which island?")
    _say(page, "Canaries")
    # the card is answered (closed, the choice marked), the typed words kept
    expect(page.locator('.ask[data-field="island"] .is-chosen')).to_contain_text("Canaries")
    expect(page.locator('#state-panel [data-field="island"]')).to_contain_text("Canaries")
    expect(_open_ask(page, "nights")).to_contain_text("How many nights?")
    # a number answers the scale, "yes" the yes/no question
    _say(page, "5")
    expect(page.locator('#state-panel [data-field="nights"]')).to_contain_text("5")
    _say(page, "yes")
    expect(page.locator('#state-panel [data-field="children"]')).to_contain_text("With children")
    assert page.dialogs == []


def test_words_containing_the_answer_fill_the_card_for_one_click(page, server):
    start_from_home(page, server, agent="intake", intake="trip")
    expect(_open_ask(page, "island")).to_be_visible()
    _say(page, "I think the Azores would be lovely")
    proposal = page.locator('#repair-region [data-repair="proposal"]')
    expect(proposal).to_contain_text("Is this your answer to “Which island?”")
    expect(proposal).to_contain_text("I think the Azores would be lovely")
    expect(proposal.get_by_label("Azores")).to_be_checked()
    expect(page.locator("#id_content")).to_have_value("")  # the words live on the card
    proposal.get_by_role("button", name="Confirm").click()
    expect(page.locator('#state-panel [data-field="island"]')).to_contain_text("Azores")
    expect(page.locator('#state-panel [data-field="island"]')).to_contain_text(
        "I think the Azores would be lovely"
    )
    expect(page.locator("#repair-region [data-repair]")).to_have_count(0)


def test_a_digression_is_answered_and_the_card_shown_again_below(page, server):
    start_from_home(page, server, agent="intake", intake="trip")
    expect(_open_ask(page, "island")).to_be_visible()
    _say(page, "What is the weather like in spring?")
    reply = page.locator(".msg-assistant", has_text="doesn't answer my question")
    expect(reply).to_be_visible()
    again = page.locator('#repair-region [data-repair="reask"]')
    expect(again).to_contain_text("Still waiting for your answer: Which island?")
    # below the reply: the region comes after the last message
    reply_box = reply.bounding_box()
    again_box = again.bounding_box()
    assert reply_box and again_box and again_box["y"] > reply_box["y"]
    # the same question, not a second one
    expect(page.locator('.ask[data-field="island"]')).to_have_count(1)
    again.get_by_label("Madeira").check()
    again.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator('#state-panel [data-field="island"]')).to_contain_text("Madeira")
    expect(_open_ask(page, "nights")).to_be_visible()


def test_never_mind_skips_and_chinese_replies_answer(browser, server):
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    page.set_default_timeout(30_000)
    login(page, server)
    start_from_home(page, server, agent="intake", intake="trip")
    expect(_open_ask(page, "island")).to_contain_text("去哪个岛？")
    _say(page, "今天天气怎么样？")
    expect(page.locator('#repair-region [data-repair="reask"]')).to_contain_text(
        "仍在等待你的回答：去哪个岛？"
    )
    _say(page, "加那利")
    expect(page.locator('#state-panel [data-field="island"]')).to_contain_text("加那利群岛")
    _say(page, "算了")
    expect(page.locator('#state-panel [data-field="nights"]')).to_contain_text("已跳过")
    context.close()


def test_without_javascript(browser, server):
    ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    login(page, server)
    start_from_home(page, server, agent="intake", intake="trip")
    # a digression: answered, and the question shown again below as a plain form
    page.fill("#id_content", "Is it warm there in May?")
    page.click("#composer button[type=submit]")
    again = page.locator('#repair-region [data-repair="reask"]')
    expect(again).to_contain_text("Which island?")
    again.get_by_label("Madeira").check()
    again.get_by_role("button", name="Send", exact=True).click()
    expect(page.locator('#state-panel [data-field="island"]')).to_contain_text("Madeira")
    # words that contain the answer: filled, one click confirms
    page.fill("#id_content", "I guess we could stay for 5 nights in total")
    page.click("#composer button[type=submit]")
    proposal = page.locator('#repair-region [data-repair="proposal"]')
    expect(proposal.locator('input[type="number"]')).to_have_value("5")
    proposal.get_by_role("button", name="Confirm").click()
    expect(page.locator('#state-panel [data-field="nights"]')).to_contain_text("5")
    ctx.close()
