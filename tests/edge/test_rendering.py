"""Markdown of untrusted text: raw HTML never reaches the page, links are safe."""

from __future__ import annotations

import time

import pytest
from django.utils.html import escape

from bench.corpus import realistic_messages
from chat.rendering import MarkdownBudget, markdown_cost, markdown_to_html
from tests.support.htmlcheck import assert_inert

_LINK_ATTRS = '<a rel="noopener noreferrer nofollow" target="_blank" href='

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


# -- work budget: hostile Markdown costs a bounded amount --------------------------------

HOSTILE = {
    "images 99500": "![" * 99500,
    "brackets 50000": "[" * 50000,
    "nested brackets": "[" * 20000 + "]" * 20000,
    "asterisks": "*" * 100000,
    "underscores": "_" * 200000,
    "backticks": "`" * 200000,
    "backtick pairs": "`a" * 100000,
    "emphasis": "**a" * 60000,
    "quotes": "> " * 5000,
    "list markers": "- " * 5000,
    "nested quote lines": "".join("> " * (i % 60) + "a\n" for i in range(5000)),
    "nested ordered lists": ("1) " * 30 + "a\n") * 3000,
    "lines": "a\n" * 100000,
    "paragraphs": "a\n\n" * 60000,
    "table": "| a | b |\n|---|---|\n" + "| x | y |\n" * 20000,
    "wide table": "|" + "a|" * 30000 + "\n|" + "-|" * 30000 + "\n|" + "x|" * 30000 + "\n",
    "fences": "```\nx\n```\n" * 20000,
    "links": "[a](b) " * 30000,
    "entities": "&amp;" * 40000,
    "angle brackets": "<a" * 100000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_markdown_is_fast_and_keeps_the_text(name):
    text = HOSTILE[name]
    start = time.process_time()
    html = markdown_to_html(text)
    elapsed = time.process_time() - start
    assert elapsed < 5.0, f"{name}: {elapsed:.2f} s"
    assert_inert(html)
    if 'class="md-over-budget' in html:
        assert escape(text) in html  # the whole text, escaped, nothing dropped


@pytest.mark.parametrize("name", ["images 99500", "brackets 50000", "emphasis", "table"])
def test_over_budget_text_is_shown_escaped(name):
    text = HOSTILE[name]
    html = markdown_to_html(text)
    assert html.startswith('<pre class="md-over-budget">')
    assert escape(text) in html


def test_over_budget_html_is_escaped():
    text = "<script>alert(1)</script>\n" * 20000
    html = markdown_to_html(text)
    assert "md-over-budget" in html
    assert "<script>" not in html
    assert_inert(html)


def test_normal_messages_are_unaffected():
    unlimited = MarkdownBudget(units=10**12, steps=10**12)
    for text in realistic_messages():
        html = markdown_to_html(text)
        assert "md-over-budget" not in html
        assert html == unlimited(text)  # the budget never changes what a reply looks like


def test_a_long_ordinary_message_is_still_markdown():
    text = "".join(realistic_messages(count=12, seed=7))  # about 120 KB
    assert len(text) > 100_000
    assert "md-over-budget" not in markdown_to_html(text)


def test_a_shared_budget_bounds_a_whole_message():
    """Many segments each under the budget: one MarkdownBudget for all of them keeps
    the whole message bounded (the rest is escaped once it is spent)."""
    budget = MarkdownBudget()
    segment = "**a" * 3000
    start = time.process_time()
    parts = [budget(segment) for _ in range(60)]
    assert time.process_time() - start < 7.5
    assert "md-over-budget" not in parts[0]
    assert "md-over-budget" in parts[-1]
    assert all(escape(segment) in p for p in parts if "md-over-budget" in p)


def test_markdown_cost_is_linear_and_cheap():
    text = "[x](y) **b** `c`\n" * 12800  # 32 x 6800 characters: the length term is exact
    start = time.process_time()
    cost = markdown_cost(text)
    assert time.process_time() - start < 0.5
    assert cost == markdown_cost(text[: len(text) // 2]) * 2
    assert markdown_cost("plain words only " * 100) == len("plain words only " * 100) // 32
