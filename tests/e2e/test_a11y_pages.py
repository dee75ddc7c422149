"""The shell's pages: axe-core (axe-playwright-python bundles it) finds no WCAG 2.1 A/AA
violation on login, home, a conversation with cards and its side panel (docked, and as a
phone's bottom sheet), the 404 page — light and dark. (Every card kind: test_a11y.py.)"""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from .conftest import login, start_from_home

WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def _violations(page) -> list[str]:
    results = Axe().run(page, options=WCAG_21_AA)
    return [
        f"{v['id']}: {[n['target'] for n in v['nodes']][:5]}"
        for v in results.response["violations"]
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_wcag_violations(browser, server, theme):
    ctx = browser.new_context(locale="en-US", color_scheme=theme)
    page = ctx.new_page()
    page.goto(server.url + "/accounts/login/")
    found = {"login": _violations(page)}
    login(page, server)
    found["home"] = _violations(page)
    start_from_home(page, server, agent="intake", intake="knee")
    expect(page.locator(".ask").first).to_be_visible(timeout=15_000)
    found["conversation"] = _violations(page)
    page.goto(server.url + "/conversations/999999/")
    found["404"] = _violations(page)
    ctx.close()
    assert {name: v for name, v in found.items() if v} == {}


def test_no_wcag_violations_in_the_phone_bottom_sheet(browser, server):
    ctx = browser.new_context(locale="en-US", viewport={"width": 360, "height": 740})
    page = ctx.new_page()
    login(page, server)
    start_from_home(page, server, agent="intake", intake="project_kickoff")
    expect(page.locator(".ask").first).to_be_visible(timeout=15_000)
    page.click("#panel-pill")
    expect(page.locator("#side-panel")).to_be_visible()
    assert _violations(page) == []
    ctx.close()
