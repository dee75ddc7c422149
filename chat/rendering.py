"""Markdown rendering for untrusted text (LLM output, user input).

markdown-it-py with the `js-default` preset: raw HTML is off (escaped), and link
validation refuses `javascript:`, `vbscript:`, `file:` and non-image `data:` URLs.
Links open in a new tab without an opener. No database access here.

Work budget.  markdown-it-py is pure Python and some inputs cost far more than their
size suggests: each `[` starts a link-label scan (about 100-400 µs), an autolink is
normalized and validated, list markers nested on every line re-run the block parser
per marker.  A single line of `"![" * 99500` took 14 s.  So rendering has two
bounds, both deterministic (the same text always renders the same way, so cached HTML
never depends on machine load):

1. `markdown_cost` — a static estimate in *units* of at most ~15 µs of markdown-it
   each, from C-speed character counts: every character that can start inline syntax
   costs 1, a line 3, a table `|` 2, a `<` 6, a `[` 40, and every 32 characters 1.
   Text over `MAX_UNITS` is not parsed at all.
2. A step counter inside the parser, for what the estimate cannot see (nesting,
   emphasis runs): a rule at the head of the block and inline rule chains counts 3
   per block step and 1 per inline step, and stops the render past `MAX_STEPS`.

Over either bound the text is shown escaped in `<pre class="md-over-budget">`:
nothing is dropped.  Worst case measured on the 2-core dev machine: ~0.25 s per call.
An ordinary reply (the bench corpus: 2-20 KB, at most ~2,700 units and ~1,500 steps)
is far inside both; so is 120 KB of ordinary prose (~16,500 units, ~8,500 steps).
`MarkdownBudget` shares one budget across several calls (the Markdown segments of one
message), so a message split into many segments is bounded as a whole.
"""

from __future__ import annotations

from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

MAX_UNITS = 20_000
"""Static estimate over which a text is not parsed (at most ~0.3 s of markdown-it)."""
MAX_STEPS = 10_000
"""Weighted parser steps (block 3, inline 1) after which a render stops (~0.3 s)."""

# Characters that end a run of plain inline text in markdown-it (its terminator set):
# each may start syntax and costs a trip through the inline rule chain.
_TERMINATORS = "!#$%&*+-:<=>@[\\]^_`{}~"
_WEIGHTS = {"\n": 3, "|": 2, "<": 6, "[": 40}
_CHARS_PER_UNIT = 32  # plain characters are cheap, but not free (indentation, spaces)
_STEPS = "_markdown_budget_steps"


class _OverBudget(Exception):
    """Raised inside markdown-it when the step budget is spent."""


def markdown_cost(text: str) -> int:
    """The static work estimate of rendering ``text`` (linear, C-speed counting)."""
    cost = len(text) // _CHARS_PER_UNIT + sum(text.count(c) for c in _TERMINATORS)
    return cost + sum(
        (weight - (c in _TERMINATORS)) * text.count(c) for c, weight in _WEIGHTS.items()
    )


def _count_step(env: EnvType, weight: int) -> None:
    steps = env.get(_STEPS)
    if steps is None:  # rendered without a budget
        return
    if steps < weight:
        raise _OverBudget
    env[_STEPS] = steps - weight


def _block_step(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    _count_step(state.env, 3)
    return False


def _inline_step(state: StateInline, silent: bool) -> bool:
    _count_step(state.env, 1)
    return False


def _link_open(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    token.attrSet("rel", "noopener noreferrer nofollow")
    token.attrSet("target", "_blank")
    return self.renderToken(tokens, idx, options, env)


def _build() -> MarkdownIt:
    md = MarkdownIt("js-default").enable("table").enable("strikethrough")
    md.add_render_rule("link_open", _link_open)
    alt = ["paragraph", "reference", "blockquote", "list"]
    md.block.ruler.before("table", "budget", _block_step, {"alt": alt})
    md.inline.ruler.before("text", "budget", _inline_step)
    return md


_MD = _build()


def _escaped(text: str) -> SafeString:
    return mark_safe(f'<pre class="md-over-budget">{escape(text)}</pre>\n')  # noqa: S308 - escaped


class MarkdownBudget:
    """Render Markdown with one work budget shared by every call.

    Give one instance to all the Markdown segments of a message: once the budget is
    spent, the rest of the message is shown escaped, so the message as a whole costs a
    bounded amount however it is split.  Each call is deterministic given the calls
    before it.
    """

    def __init__(self, units: int = MAX_UNITS, steps: int = MAX_STEPS) -> None:
        self.units = units
        self.steps = steps

    def __call__(self, text: str) -> SafeString:
        cost = markdown_cost(text)
        if cost > self.units or self.steps < 3:
            return _escaped(text)
        self.units -= cost
        env: dict[str, Any] = {_STEPS: self.steps}
        try:
            html = _MD.render(text, env)
        except _OverBudget:
            self.steps = 0
            return _escaped(text)
        self.steps = env[_STEPS]
        return mark_safe(html)  # noqa: S308 - markdown-it escapes all raw HTML


def markdown_to_html(text: str) -> SafeString:
    """Render untrusted Markdown to safe HTML, within the work budget (see module doc)."""
    return MarkdownBudget()(text)


def render_options() -> dict[str, Any]:
    return dict(_MD.options)
