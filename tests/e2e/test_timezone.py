"""A browser tells the server its time zone on the first page (issue 33.3)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import login

pytestmark = pytest.mark.e2e


def test_the_browsers_zone_reaches_the_server(browser, server):
    context = browser.new_context(locale="zh-CN", timezone_id="Asia/Shanghai")
    try:
        page = context.new_page()
        login(page, server)
        cookies = {c["name"]: c["value"] for c in context.cookies(server.url)}
        assert cookies.get("tz") == "Asia/Shanghai"
    finally:
        context.close()
