"""Markdown of untrusted text: raw HTML never reaches the page, links are safe."""

from __future__ import annotations

import pytest

from chat.rendering import markdown_to_html
from tests.support.htmlcheck import assert_inert

XSS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "[click](JAVASCRIPT:alert(1))",
    "[c](vbscript:msgbox(1))",
    "[c](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "![x](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "<svg onload=alert(1)>",
    "<iframe src=//evil></iframe>",
    '"><script>alert(1)</script>',
    '<div style="background:url(javascript:alert(1))">x</div>',
]


@pytest.mark.parametrize("payload", XSS)
def test_no_executable_html(payload):
    assert_inert(markdown_to_html(payload))


def test_markdown_basics_and_safe_links():
    html = markdown_to_html("**b** _i_ `c`\n\n[site](https://example.com)\n\n| a |\n|---|\n| 1 |")
    assert "<strong>b</strong>" in html and "<em>i</em>" in html and "<code>c</code>" in html
    assert 'href="https://example.com"' in html
    assert 'rel="noopener noreferrer nofollow"' in html
    assert "<table>" in html
