"""Code highlighting (Pygments) with a bounded cost.

Pygments lexers are regular expressions written for well-formed code, and some of them
backtrack badly on hostile text: ```` ```systemd ```` with "x" and 2,000 spaces took 60 s
of CPU (cubic), `autoit` on long runs of spaces is quadratic. A timeout can't stop a
regular expression that runs in C, and a render that depends on the machine's load
couldn't be cached, so the bound is decided ahead of time, per lexer:

- `bench/lexer_fuzz.py` times every lexer Pygments ships on a few hundred hostile shapes
  (runs of every ASCII punctuation character, spaces, tabs, line breaks, letters and
  digits, after the usual openers) at two sizes, extrapolates each shape's growth and
  writes `lexer_costs.json`: each lexer's *cost curve*, the worst shape's CPU seconds at
  each of `SIZES` characters. A lexer that can't do `bench.lexer_fuzz.LARGE` characters
  of some shape in half a second is left out.
- Some lexers of common languages (C, C++, C#) have rules that backtrack without bound;
  `chat.lexers` has variants of them with those rules rewritten so they can't, and
  those are what is measured and used (`lexer_for`).
- A lexer can run others: a fixed one (HTML's `<script>` is JavaScript), or one named in
  the text (a Markdown fence's language, PostgreSQL's `$$ … $$ LANGUAGE name`), which
  the fuzz's shapes don't reach (issue 34: a `postgresql` block with a `LANGUAGE systemd`
  body took 4.9 s). `chat.lexers.reached_lexers` reads which lexers a lexer's code can
  run; a lexer that looks one up from the text is never used (the common ones have a
  variant in `chat.lexers` that doesn't), and one that can run another is charged the
  sum of their curves (`charged_costs`).
- A language whose lexer (or a lexer it can run) is not in that file — unbounded,
  unknown, or measured under another Pygments version — is shown as plain code
  (escaped text, still copyable).
- Highlighting a block costs `highlight_units(code, lexer)` work units of the Markdown
  budget (`chat.rendering`: ~15 µs each): its lexer's worst case at the block's size
  (`worst_seconds` of `charged_costs`), with a margin. A block the budget can't pay for is shown as plain
  code; the rest of the message still renders. So a lexer whose cost grows fast
  highlights a small block and shows a big one plain, and a hostile block costs its
  worst case at most.

Regenerate the file after upgrading Pygments: `python -m bench.lexer_fuzz --write`
(a test fails while it was measured for another version).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from pathlib import Path

import pygments
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from chat.lexers import ResolvesLexer, bounded_class, reached_lexers

COSTS_FILE = Path(__file__).with_name("lexer_costs.json")
UNIT_MICROSECONDS = 15.0
"""What one unit of the Markdown work budget stands for (see chat.rendering)."""
MARGIN = 1.5
"""Measured worst cost × this = what a block is charged (other machines, other shapes)."""
SIZES = (1_600, 5_000, 20_000)
"""The block sizes (characters) a cost curve gives seconds for."""
HIGHLIGHT_MAX_CHARS = 20_000
"""Past this a block is plain text whatever it costs: highlighting a huge block helps no one."""

_FORMATTER = HtmlFormatter(nowrap=True)


@functools.cache
def lexer_costs() -> dict[str, tuple[float, ...]]:
    """Bounded lexers (class name → worst seconds at each of `SIZES`), or nothing at all
    when the file is missing or was measured for another Pygments version."""
    try:
        data = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if data.get("pygments") != pygments.__version__ or tuple(data.get("sizes", ())) != SIZES:
        return {}
    return {
        str(name): tuple(math.inf if cost is None else float(cost) for cost in costs)
        for name, costs in data["lexers"].items()
    }


def worst_seconds(size: int, costs: tuple[float, ...]) -> float:
    """The lexer's worst case for a block of `size` characters: linear below the first
    size of the curve, a power law between two sizes (its growth there, never less than
    the growth before: hostile shapes get worse with size, not better); `inf` past a size
    it couldn't do."""
    if size <= SIZES[0]:
        return costs[0] * size / SIZES[0]
    growth = 1.0
    for (low, t_low), (high, t_high) in itertools.pairwise(zip(SIZES, costs, strict=True)):
        if math.isinf(t_high):
            return math.inf
        growth = max(growth, math.log(max(t_high, 1e-9) / max(t_low, 1e-9)) / math.log(high / low))
        if size <= high:
            return float(t_low * (size / low) ** growth)
    return math.inf


def charged_costs(lexer: type[Lexer]) -> tuple[float, ...] | None:
    """The cost curve a block highlighted with ``lexer`` is charged: the sum of its own
    and of every lexer it can run (each run on a part of the block costs at most its
    curve at the block's size, and the curves grow at least linearly, so the parts cost
    no more than the whole); None when one of them is unmeasured or unbounded, or when
    ``lexer`` looks a lexer up from the text."""
    costs = lexer_costs()
    try:
        lexers = [lexer, *reached_lexers(lexer)]
    except ResolvesLexer:
        return None
    curves = [costs.get(each.__name__) for each in lexers]
    if any(curve is None for curve in curves):
        return None
    return tuple(map(sum, zip(*(curve for curve in curves if curve is not None), strict=True)))


def lexer_for(lang: str) -> Lexer:
    """The lexer a fence's language is highlighted with: Pygments', or its bounded
    variant (`chat.lexers`); raises `ClassNotFound` for an unknown language."""
    return bounded_class(get_lexer_by_name(lang, stripnl=False, ensurenl=False))


@functools.lru_cache(maxsize=256)
def bounded_lexer(lang: str) -> Lexer | None:
    """The lexer of a fence's language when its cost is known to be bounded, else None."""
    if not lang or len(lang) > 100:
        return None
    try:
        lexer = lexer_for(lang)
    except (ClassNotFound, ValueError):
        return None
    return lexer if charged_costs(type(lexer)) is not None else None


def highlight_units(code: str, lexer: Lexer) -> float:
    """The Markdown-budget units highlighting ``code`` with ``lexer`` is charged (`inf`
    past HIGHLIGHT_MAX_CHARS)."""
    if len(code) > HIGHLIGHT_MAX_CHARS:
        return math.inf
    costs = charged_costs(type(lexer))
    if costs is None:
        return math.inf
    seconds = worst_seconds(len(code), costs)
    return max(1.0, seconds * MARGIN * 1e6 / UNIT_MICROSECONDS)


def highlight_html(code: str, lexer: Lexer) -> str:
    """Pygments spans (CSS classes only) for ``code``; Pygments escapes the text."""
    return str(highlight(code, lexer, _FORMATTER))
