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


def test_the_admin_uses_the_products_palette_font_and_focus_ring(browser, server):
    server.shell(
        "from django.contrib.auth.models import User\n"
        "User.objects.filter(username='design-admin').exists() or "
        "User.objects.create_superuser('design-admin', password='design-admin-pw-1')"
    )
    for scheme, header, link in (
        ("light", "rgb(36, 86, 211)", "rgb(36, 86, 211)"),
        ("dark", "rgb(27, 37, 64)", "rgb(138, 171, 255)"),
    ):
        context = browser.new_context(locale="en-US", color_scheme=scheme)
        try:
            page = context.new_page()
            page.goto(server.url + "/admin/login/")
            expect(page.locator("#site-name .logo")).to_be_visible()
            page.fill("#id_username", "design-admin")
            page.fill("#id_password", "design-admin-pw-1")
            page.click("input[type=submit]")
            expect(page.locator("#site-name")).to_contain_text("Questionnaire chat")

            def css(selector: str, prop: str, page=page) -> str:
                return page.eval_on_selector(
                    selector, f"e => getComputedStyle(e).getPropertyValue('{prop}')"
                )

            assert css("#header", "background-color") == header, scheme
            assert css("#content-main tr[class^=model-] th a", "color") == link, scheme
            assert css("body", "font-family").startswith("system-ui"), scheme
            # Reached by keyboard (so :focus-visible applies): the product's 3 px ring.
            page.locator("[data-admin-brand]").focus()
            page.keyboard.press("Shift+Tab")
            page.keyboard.press("Tab")
            assert css("[data-admin-brand]", "outline-style") == "solid", scheme
            assert css("[data-admin-brand]", "outline-width") == "3px", scheme
        finally:
            context.close()
