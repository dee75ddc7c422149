from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import login, new_conversation


def test_send_message_renders_markdown_and_agent_answers(page, server):
    new_conversation(page, server, title="E2E chat")
    page.fill("#id_content", "Hello **world**")
    page.keyboard.press("Enter")
    expect(page.locator("article.msg-user strong")).to_have_text("world")
    expect(page.locator("article.msg-assistant").last).to_contain_text("Echo: Hello")
    expect(page.locator("#id_content")).to_have_value("")
    expect(page.locator("#run-live")).to_be_hidden()  # no empty live bubble once done


def test_two_tabs_see_each_others_messages_live(browser, page, server):
    cid = new_conversation(page, server)
    other_ctx = browser.new_context()
    other = other_ctx.new_page()
    login(other, server)
    other.goto(f"{server.url}/conversations/{cid}/")
    other.wait_for_timeout(300)  # let the event stream connect
    page.fill("#id_content", "from tab one")
    page.click("#composer button[type=submit]")
    expect(other.locator("article.msg-user")).to_contain_text("from tab one")
    expect(other.locator("article.msg-assistant")).to_contain_text("Echo: from tab one")
    # and back the other way
    other.fill("#id_content", "from tab two")
    other.click("#composer button[type=submit]")
    expect(page.locator("article.msg-user").last).to_contain_text("from tab two")
    expect(page.locator("#messages article")).to_have_count(4)
    other_ctx.close()


def test_no_js_path_works(browser, server):
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    login(page, server)
    cid = new_conversation(page, server, title="no js")
    page.fill("#id_content", "plain *form*")
    page.click("#composer button[type=submit]")
    page.wait_for_url(f"**/conversations/{cid}/")
    expect(page.locator("article.msg-user em")).to_have_text("form")
    expect(page.locator("article.msg-assistant")).to_contain_text("Echo: plain")
    ctx.close()


def test_xss_payloads_never_execute(page, server):
    new_conversation(page, server, title="<img src=x onerror=alert('title')>")
    payloads = [
        "<script>alert('s')</script>",
        "<img src=x onerror=alert('i')>",
        "[x](javascript:alert('l'))",
        "<svg onload=alert('v')>",
    ]
    for text in payloads:
        page.fill("#id_content", text)
        page.click("#composer button[type=submit]")
        expect(page.locator("article.msg-user").last).to_contain_text(text.split("(")[0][:8])
    # Clicking what is left of the links must not run anything either.
    for link in page.locator("article.msg a[href]").all():
        link.click(modifiers=["Control"])
    page.wait_for_timeout(300)
    assert page.dialogs == []
    assert page.evaluate("document.querySelectorAll('.msg script, .msg img, .msg svg').length") == 0


def test_refused_message_shows_reason_and_keeps_text(page, server):
    new_conversation(page, server)
    text = "x" * 20001
    page.fill("#id_content", text)
    page.click("#composer button[type=submit]")
    expect(page.locator("#composer-error")).to_contain_text("the limit is 20000")
    expect(page.locator("#id_content")).to_have_value(text)
    expect(page.locator("article.msg-user")).to_have_count(0)
