"""The bounded lexers of common languages (chat.lexers): same highlighting, bounded cost."""

from __future__ import annotations

import json
import math
import time
from itertools import groupby
from pathlib import Path

import pytest
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name

from bench.lexer_fuzz import shape_text, shapes
from chat.highlight import (
    COSTS_FILE,
    HIGHLIGHT_MAX_CHARS,
    SIZES,
    highlight_html,
    lexer_for,
    worst_seconds,
)
from chat.lexers import BOUNDED, LOOKUP_FREE
from chat.rendering import markdown_to_html

SAMPLES = Path(__file__).with_name("code_samples")
LANGUAGES = {  # fence language → a realistic sample
    "c": "sample.c",
    "cpp": "sample.cpp",
    "csharp": "sample.cs",
    "java": "Sample.java",
    "python": "sample.py.txt",  # not .py: ruff would reformat it
    "scala": "sample.scala",
    "objective-c": "sample.c",  # C and C++ are these languages' subsets
    "objective-c++": "sample.cpp",
    "arduino": "sample.cpp",
    "cuda": "sample.cpp",
}


def _tokens(lexer: Lexer, code: str) -> list[tuple[object, str]]:
    """The token stream with neighbours of one type merged (as the HTML shows them)."""
    return [
        (ttype, "".join(v for _, v in group))
        for ttype, group in groupby(lexer.get_tokens(code), key=lambda t: t[0])
    ]


@pytest.mark.parametrize(("lang", "sample"), LANGUAGES.items())
def test_well_formed_code_gets_the_original_tokens(lang, sample):
    code = (SAMPLES / sample).read_text(encoding="utf-8")
    original = get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    bounded = lexer_for(lang)
    assert type(bounded) is BOUNDED[type(original).__name__]
    assert _tokens(bounded, code) == _tokens(original, code)


@pytest.mark.parametrize(
    ("lang", "sample"),
    [("c++", "cpp"), ("c#", "csharp"), ("py", "python"), *((lang, lang) for lang in LANGUAGES)],
)
def test_common_languages_are_highlighted(lang, sample):
    code = (SAMPLES / LANGUAGES[sample]).read_text(encoding="utf-8")
    html = markdown_to_html(f"```{lang}\n{code}```")
    block = html.split('<pre class="highlight">', 1)[1]
    assert '<span class="k' in block and '<span class="nf">' in block  # keywords, functions
    assert '<span class="c' in block  # comments


def test_every_bounded_lexer_has_a_bounded_cost_curve():
    """Measured by `python -m bench.lexer_fuzz --write c cpp csharp java`: no bound, no
    highlighting. Each must highlight a good-sized block within a message's budget."""
    data = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
    for original, bounded in BOUNDED.items():
        assert original not in data["lexers"] and original not in data["unbounded"]
        if original in LOOKUP_FREE:  # the original's rules: its curve (issue 34)
            continue
        costs = tuple(math.inf if c is None else c for c in data["lexers"][bounded.__name__])
        assert all(c < math.inf for c in costs), bounded.__name__
        # at most ~quadratic growth, and 5,000 characters of the worst shape in 0.5 s
        assert costs[-1] <= costs[0] * (SIZES[-1] / SIZES[0]) ** 2
        assert worst_seconds(5_000, costs) < 0.5


FORMER_WORST = [  # the original's worst shapes in lexer_costs.json (and the next ones found)
    ("CLexer", "'' + '\\n'*n"),
    ("CLexer", "'x' + '/'*n"),
    ("CppLexer", "'x' + '\\n'*n"),
    ("CSharpLexer", "'x\\n'*n"),
    ("CSharpLexer", "'(' + '/'*n"),
    ("JavaLexer", "'a = ' + '\\n'*n"),
    ("JavaLexer", "'x '*n"),
    ("ScalaLexer", "'\"' + '%'*n"),
    ("ScalaLexer", "'\"' + '\\\\'*n"),
    ("ScalaLexer", "'a = ' + '?'*n"),
    ("PythonLexer", "' \\n'*n"),
    ("PythonLexer", "'\\t\\n'*n"),
]


@pytest.mark.parametrize(("original", "shape"), FORMER_WORST)
def test_a_former_worst_shape_is_cheap_at_full_size(original, shape):
    """A shape that made the original unbounded (issue 22) or slow, at the largest block
    a fence may highlight: a generous CPU bound (the bench measures the real figure)."""
    prefix, unit = shapes()[shape]
    text = shape_text(prefix, unit, HIGHLIGHT_MAX_CHARS)
    lexer = BOUNDED[original](stripnl=False, ensurenl=False)
    start = time.process_time()
    highlight_html(text, lexer)
    assert time.process_time() - start < 2.0
