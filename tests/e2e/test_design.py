"""Issue 32's design items in a browser: the playground's examples, the admin's colours."""

from __future__ import annotations

import re

from playwright.sync_api import expect


def test_the_playground_loads_an_example_and_asks_before_replacing_typing(page, server):
    page.goto(server.url + "/questionnaires/playground/")
    page.select_option("#pg-example", "yaml-multi")
    page.click("#pg-examples button[type=submit]")
    expect(page.locator("#pg-content")).to_have_value(re.compile(r"title: Trip plan"))
    expect(page.locator(".pg-pass")).to_be_visible()
    expect(page.locator(".pg-preview .qcard-preview, .pg-preview form").first).to_be_visible()
    assert page.dialogs == []  # the editor held the page's own text: nothing to lose
    # Typed text is not thrown away without asking (the page dismisses the question).
    page.fill("#pg-content", "my own message")
    page.select_option("#pg-example", "invalid")
    page.click("#pg-examples button[type=submit]")
    expect(page.locator("#pg-content")).to_have_value("my own message")
    assert len(page.dialogs) == 1 and "Replace the message" in page.dialogs[0]
    # The invalid example: self-check flags it.
    page.fill("#pg-content", "")
    page.click("#pg-examples button[type=submit]")
    expect(page.locator(".pg-fail")).to_be_visible()
    assert "example=invalid" in page.url
