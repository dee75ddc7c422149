"""Code highlighting within the Markdown budget (issue 22: one fenced block took 60 s)."""

from __future__ import annotations

import json
import math
import time

import pygments
import pytest

from chat import highlight
from chat.highlight import COSTS_FILE, SIZES, bounded_lexer, highlight_units, worst_seconds
from chat.rendering import HIGHLIGHT_UNITS, MarkdownBudget, markdown_to_html


def test_the_costs_were_measured_for_the_installed_pygments():
    """After a Pygments upgrade every block would show as plain code: measure again with
    `python -m bench.lexer_fuzz --write`."""
    data = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
    assert data["pygments"] == pygments.__version__
    assert tuple(data["sizes"]) == SIZES
    assert len(data["lexers"]) > 100  # most languages are bounded
    assert "SystemdLexer" in data["unbounded"]  # cubic: x and 2,000 spaces took 60 s


def test_a_bounded_language_is_highlighted():
    html = markdown_to_html('```json\n{"a": [1, 2]}\n```')
    assert '<span class="p">{</span>' in html and 'class="language-json"' in html


@pytest.mark.parametrize("lang", ["systemd", "no-such-language", "", "x" * 200])
def test_unknown_or_unbounded_languages_are_plain_code(lang):
    html = markdown_to_html(f"```{lang}\nx = 1\n```")
    assert '<pre class="highlight"><code' in html and "<span" not in html.split("<pre", 1)[1]


def test_the_systemd_bomb_renders_at_once():
    start = time.process_time()
    html = markdown_to_html("```systemd\nx" + " " * 2000 + "\n```")
    assert time.process_time() - start < 0.5
    assert '<pre class="highlight">' in html


def test_worst_seconds_follows_the_measured_curve():
    speeding_up = (0.01, 0.05, 0.8)  # x1.41 growth to 5,000, then quadratic
    assert worst_seconds(800, speeding_up) == pytest.approx(0.005)  # linear below 1,600
    assert worst_seconds(SIZES[0], speeding_up) == pytest.approx(0.01)
    assert worst_seconds(SIZES[1], speeding_up) == pytest.approx(0.05)
    assert worst_seconds(10_000, speeding_up) == pytest.approx(0.2)
    slowing_down = (0.01, 0.1, 0.2)  # a measured growth is never assumed to slow down
    assert worst_seconds(SIZES[2], slowing_down) > 1.0
    assert worst_seconds(SIZES[2] + 1, speeding_up) == math.inf
    assert worst_seconds(2000, (0.01, math.inf, math.inf)) == math.inf


def test_blocks_share_one_budget_per_message():
    """The budget is the message's: later blocks show plain once it is spent."""
    lexer = bounded_lexer("python")
    assert lexer is not None
    block = "x = 1\n" * 1000
    fits = int(HIGHLIGHT_UNITS // highlight_units(block, lexer))
    assert 1 <= fits <= 5
    text = "\n\n".join(f"```python\n{block}```" for _ in range(fits + 2))
    blocks = MarkdownBudget()(text).split('<pre class="highlight">')[1:]
    assert len(blocks) == fits + 2
    assert ['<span class="n">x</span>' in b for b in blocks] == [True] * fits + [False, False]


def test_another_pygments_version_trusts_no_lexer(monkeypatch):
    highlight.lexer_costs.cache_clear()
    highlight.bounded_lexer.cache_clear()
    monkeypatch.setattr(pygments, "__version__", "0.0-other")
    try:
        assert bounded_lexer("json") is None
    finally:
        monkeypatch.undo()
        highlight.lexer_costs.cache_clear()
        highlight.bounded_lexer.cache_clear()
