"""Markdown rendering for untrusted text (LLM output, user input).

markdown-it-py with the `js-default` preset: raw HTML is off (escaped), and link
validation refuses `javascript:`, `vbscript:`, `file:` and non-image `data:` URLs.
Links open in a new tab without an opener. Fenced code with a language is highlighted
server-side by Pygments (CSS classes only: static/css/code.css has the light and dark
colours) under a small header with the language and a copy button (shown by
static/js/ui.js); tables scroll sideways inside their own box. No database access here.
Highlighting is bounded too (`chat.highlight`): each block is charged its lexer's
measured worst case against `HIGHLIGHT_UNITS` of the message's budget, and a block the
budget can't pay for, or in a language whose cost has no bound, is shown as plain code.

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
from django.utils.translation import gettext
from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.renderer import RendererHTML
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments.formatters import HtmlFormatter

from chat.highlight import bounded_lexer, highlight_html, highlight_units

MAX_UNITS = 20_000
"""Static estimate over which a text is not parsed (at most ~0.3 s of markdown-it)."""
MAX_STEPS = 10_000
"""Weighted parser steps (block 3, inline 1) after which a render stops (~0.3 s)."""
HIGHLIGHT_UNITS = 10_000
"""Units of code highlighting a message may spend (~0.15 s of its lexers' worst cases)."""

# Characters that end a run of plain inline text in markdown-it (its terminator set):
# each may start syntax and costs a trip through the inline rule chain.
_TERMINATORS = "!#$%&*+-:<=>@[\\]^_`{}~"
_WEIGHTS = {"\n": 3, "|": 2, "<": 6, "[": 40}
_CHARS_PER_UNIT = 32  # plain characters are cheap, but not free (indentation, spaces)
_STEPS = "_markdown_budget_steps"
_CODE = "_markdown_budget_code"


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


def highlight_code(code: str, lang: str, env: EnvType | None = None) -> str:
    """HTML for a code block's text: Pygments spans when the language's lexer is bounded
    and the budget (``env``'s, else a fresh `HIGHLIGHT_UNITS`) pays for it, else escaped
    text. Pygments escapes the code itself."""
    lexer = bounded_lexer(lang)
    if lexer is not None:
        units = highlight_units(code, lexer)
        left = HIGHLIGHT_UNITS if env is None else env.get(_CODE, HIGHLIGHT_UNITS)
        if units <= left:
            if env is not None:
                env[_CODE] = left - units
            return highlight_html(code, lexer)
    return str(escape(code))


def _code_block_html(code: str, lang: str, env: EnvType | None = None) -> str:
    label = escape(lang)
    copy, copied = escape(gettext("Copy")), escape(gettext("Copied"))
    css = f' class="language-{label}"' if lang else ""
    return (
        '<div class="code-block"><div class="code-head">'
        f'<span class="code-lang">{label}</span>'
        f'<button type="button" class="code-copy" data-copy-code data-js-only data-copied="{copied}">'
        f"<span>{copy}</span></button></div>"
        f'<pre class="highlight"><code{css}>{highlight_code(code, lang, env)}</code></pre></div>\n'
    )


def _fence(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    info = unescapeAll(token.info).strip() if token.info else ""
    lang = info.split()[0] if info else ""
    return _code_block_html(token.content, lang, env)


def _code_block(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return _code_block_html(tokens[idx].content, "")


def _table_open(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return '<div class="table-wrap">' + self.renderToken(tokens, idx, options, env)


def _table_close(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return self.renderToken(tokens, idx, options, env) + "</div>\n"


def renderer(*, budget: bool = True) -> MarkdownIt:
    """The chat's markdown-it setup; `budget=False` leaves out the step counter (the
    benchmark of what the budget itself costs)."""
    md = MarkdownIt("js-default").enable("table").enable("strikethrough")
    md.add_render_rule("link_open", _link_open)
    if budget:
        alt = ["paragraph", "reference", "blockquote", "list"]
        md.block.ruler.before("table", "budget", _block_step, {"alt": alt})
        md.inline.ruler.before("text", "budget", _inline_step)
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _code_block)
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("table_close", _table_close)
    return md


_MD = renderer()


def _escaped(text: str) -> SafeString:
    return mark_safe(f'<pre class="md-over-budget">{escape(text)}</pre>\n')  # noqa: S308 - escaped


class MarkdownBudget:
    """Render Markdown with one work budget shared by every call.

    Give one instance to all the Markdown segments of a message: once the budget is
    spent, the rest of the message is shown escaped, so the message as a whole costs a
    bounded amount however it is split.  Each call is deterministic given the calls
    before it.
    """

    def __init__(
        self, units: int = MAX_UNITS, steps: int = MAX_STEPS, code: float = HIGHLIGHT_UNITS
    ) -> None:
        self.units = units
        self.steps = steps
        self.code = code

    def __call__(self, text: str) -> SafeString:
        cost = markdown_cost(text)
        if cost > self.units or self.steps < 3:
            return _escaped(text)
        self.units -= cost
        env: dict[str, Any] = {_STEPS: self.steps, _CODE: self.code}
        try:
            html = _MD.render(text, env)
        except _OverBudget:
            self.steps = 0
            return _escaped(text)
        self.steps, self.code = env[_STEPS], env[_CODE]
        return mark_safe(str(html))  # noqa: S308 - markdown-it escapes all raw HTML


def markdown_to_html(text: str) -> SafeString:
    """Render untrusted Markdown to safe HTML, within the work budget (see module doc)."""
    return MarkdownBudget()(text)


def code_css() -> str:
    """static/css/code.css: Pygments colours for the light theme and, in a
    prefers-color-scheme media query, the dark one (regenerate with
    `python -c "from chat.rendering import code_css; print(code_css())"`)."""
    light = HtmlFormatter(style="default").get_style_defs(".highlight")
    dark = HtmlFormatter(style="github-dark").get_style_defs(".highlight")
    lines = [line for line in light.splitlines() if not line.startswith(("pre {", ".highlight {"))]
    dark_lines = [
        "  " + line
        for line in dark.splitlines()
        if not line.startswith(("pre {", ".highlight {", ".highlight .hll"))
    ]
    return (
        "/* Generated by chat.rendering.code_css() from Pygments' default and github-dark. */\n"
        + "\n".join(lines)
        + "\n@media (prefers-color-scheme: dark) {\n"
        + "\n".join(dark_lines)
        + "\n}\n"
    )
