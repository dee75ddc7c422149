"""Adversarial rendering benchmarks (issue "Hostile input never breaks a page, costs a
bounded amount").

Each case is one hostile message, timed through the chat's real rendering path:
``questionnaires.inline.render.render_message`` (``parse_message``, the card templates, and
``chat.rendering.markdown_to_html`` for the Markdown segments).  That needs Django's
settings and templates but no database, so the cases run in a child process with its
own settings (the other bench modules set Django up in this process).

- `adversarial_worst_render_seconds`: the slowest case (best of 3 runs each), through
  the page's rendering and through the API's segment JSON (`GET …/messages`) alike.
- `adversarial_split_render_seconds`: a message cut into many Markdown segments, each
  under the per-call budget: ``render_message`` gives all the segments of a message one
  ``MarkdownBudget``, so the message as a whole stays bounded.
- `adversarial_worst_lexer_render_seconds`: a fuzz over every Pygments lexer (issue 22):
  each lexer's worst shape (``bench.lexer_fuzz``, recorded in ``chat/lexer_costs.json``)
  as a fenced block of the largest size the highlighting budget still pays for, and at
  the message's 20,000 characters, rendered like any message; the slowest (best of 3)
  and its lexer are reported.
- `markdown_budget_overhead_ratio`: ``markdown_to_html`` (budgeted) against the same
  renderer without the budget (``chat.rendering.renderer(budget=False)``: links, Pygments
  code blocks, tables alike) on the realistic corpus of ``bench_protocol``.

Run it alone: ``python -m bench bench_adversarial``.  Not a unit test.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZE = 200_000
REPEAT = 3


def _fill(unit: str, size: int = SIZE) -> str:
    return unit * (size // len(unit) + 1)


def _just_under_budget(unit: str) -> str:
    """``unit`` repeated as often as the static Markdown estimate allows: the slowest
    text that is still parsed (the step counter may stop it later)."""
    from chat.rendering import MAX_UNITS, markdown_cost

    low, high = 1, 1_000_000 // len(unit)
    while low < high:
        middle = (low + high + 1) // 2
        if markdown_cost(unit * middle) <= MAX_UNITS:
            low = middle
        else:
            high = middle - 1
    return unit * low


def _xml_options_block(options: int) -> str:
    body = {"title": "T", "questions": [{"type": "single_choice", "text": "Q"}]}
    body["questions"][0]["options"] = [str(i) for i in range(options)]
    return "<questionnaire>" + json.dumps(body, separators=(",", ":")) + "</questionnaire>"


def _fenced_options_block(options: int) -> str:
    lines = "".join(f"      - '{i}'\n" for i in range(options))
    return (
        "```questionnaire\ntitle: T\nquestions:\n  - type: single_choice\n    text: Q\n"
        f"    default: '0'\n    options:\n{lines}```\n"
    )


def cases() -> dict[str, tuple[str, str]]:
    """name -> (role, content).  Protocol blocks, Markdown pathologies, and both."""
    nested = "[" * 5000 + "]" * 5000
    objects = '{"a":' * 5000 + "1" + "}" * 5000
    return {
        "3 x 64 KiB xml blocks, 9.5k options": (
            "assistant",
            "Intro\n" + "\n".join([_xml_options_block(9500)] * 3),
        ),
        "64 KiB fenced block, 5k options": (
            "assistant",
            "Intro\n\n" + _fenced_options_block(5000),
        ),
        "json brackets 5000 deep": ("assistant", f"Intro <questionnaire>{nested}</questionnaire>"),
        "json objects 5000 deep": ("assistant", f"Intro <questionnaire>{objects}</questionnaire>"),
        "yaml flow 5000 deep": ("assistant", f"Intro\n\n```questionnaire\ntitle: {nested}\n```\n"),
        "response brackets 5000 deep": (
            "user",
            f"<questionnaire-response>{nested}</questionnaire-response>",
        ),
        "images ![ x 99500": ("assistant", "![" * 99500),
        "brackets [ x 200k": ("assistant", "[" * SIZE),
        "asterisks 200k": ("assistant", "*" * SIZE),
        "underscores 200k": ("assistant", "_" * SIZE),
        "backticks 200k": ("assistant", "`" * SIZE),
        "backtick pairs 200k": ("assistant", _fill("`a")),
        "emphasis **a 200k": ("assistant", _fill("**a")),
        "quotes > x 5000": ("assistant", "> " * 5000),
        "lists - x 5000": ("assistant", "- " * 5000),
        "nested quotes per line 200k": ("assistant", _fill("> " * 30 + "a\n")),
        "nested lists per line 200k": ("assistant", _fill("- " * 30 + "a\n")),
        "nested ordered lists 200k": ("assistant", _fill("1) " * 30 + "a\n")),
        "lines 200k": ("assistant", _fill("a\n")),
        "table 200k": ("assistant", "| a | b |\n|---|---|\n" + _fill("| x | y |\n")),
        "wide table 200k": ("assistant", "|" + "a|" * 30000 + "\n|" + "-|" * 30000 + "\n"),
        "code fences 200k": ("assistant", _fill("```\nx\n```\n")),
        "links 200k": ("assistant", _fill("[a](b) ")),
        "autolinks 200k": ("assistant", _fill("<http://a.b> ")),
        "indentation 1 MB": ("assistant", _fill("  " * 100 + "- a\n", 1_000_000)),
        "tag soup 200k": ("assistant", _fill("<questionnaire>")),
        "self-closing tags 200k": ("assistant", _fill("x <questionnaire/> ")),
        "unclosed fence of brackets": ("assistant", "Intro\n```questionnaire\n" + "[" * SIZE),
        "300 invalid fenced questionnaires": (
            "assistant",
            "Intro\n\n" + "```questionnaire\ntitle: T\nquestions: []\n```\n" * 300,
        ),
        **{
            f"just under the budget: {unit!r}"[:60]: ("assistant", _just_under_budget(unit))
            for unit in UNDER_BUDGET_UNITS
        },
    }


# Shapes whose cost per estimated unit is highest (measured): parsed up to the budget.
UNDER_BUDGET_UNITS = [
    "<http://a.b> ",
    "<![",
    "![",
    "[a",
    "*[",
    "a\n=\n",
    "a\n\n",
    "_*",
    "**a",
    "| x | y |\n",
    "- " * 30 + "a\n",
    "1) " * 30 + "a\n",
    "  " * 100 + "- a\n",
]


def _fenced(alias: str, code: str) -> str:
    fence = "~~~~" if "`" in code else "````"
    return f"Some code:\n\n{fence}{alias}\n{code}\n{fence}\n"


def _edge_size(lexer: Any, prefix: str, unit: str) -> int:
    """The largest block of this shape the highlighting budget still pays for."""
    from bench.lexer_fuzz import shape_text
    from chat.highlight import HIGHLIGHT_MAX_CHARS, highlight_units
    from chat.rendering import HIGHLIGHT_UNITS

    low, high = 1, HIGHLIGHT_MAX_CHARS
    while low < high:
        middle = (low + high + 1) // 2
        if highlight_units(shape_text(prefix, unit, middle), lexer) <= HIGHLIGHT_UNITS:
            low = middle
        else:
            high = middle - 1
    return low


def lexer_cases() -> dict[str, str]:
    """name -> content: every lexer's worst shape at its budget's edge and at 20,000
    characters (where every lexer whose cost grows is shown as plain code)."""
    from bench.lexer_fuzz import lexer_aliases, shape_text, shapes
    from chat.highlight import COSTS_FILE, bounded_lexer

    worst = json.loads(COSTS_FILE.read_text(encoding="utf-8"))["worst_shapes"]
    table = shapes()
    found = {}
    for name, alias in lexer_aliases().items():
        shape = worst.get(name, "'x' + ' '*n")
        prefix, unit = table.get(shape, ("x", " "))
        lexer = bounded_lexer(alias)
        if lexer is not None:
            # the fence's content ends with a line break: one character less
            edge = shape_text(prefix, unit, _edge_size(lexer, prefix, unit) - 1)
            found[f"{alias} at its edge: {shape}"] = _fenced(alias, edge)
        found[f"{alias} 20,000: {shape}"] = _fenced(alias, shape_text(prefix, unit, 19_900))
    return found


def split_message(size: int = SIZE) -> str:
    """Markdown segments that each stay under the per-call budget, cut apart by
    protocol blocks: today every segment gets a fresh budget."""
    return _fill("**a" * 3000 + "\n<questionnaire/>\n", size)


def _best(func: Callable[[], object], repeat: int = REPEAT) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def _child() -> dict[str, Any]:
    """Runs in the child process: Django set up without touching any database."""
    import django

    django.setup()

    from bench.corpus import realistic_messages
    from chat.rendering import MarkdownBudget, markdown_to_html, renderer
    from questionnaires.inline.presenter import MessageInput, MessageState
    from questionnaires.inline.render import render_message
    from questionnaires.protocol import parse_message

    def render(role: str, content: str) -> None:
        message = MessageInput(id=1, role=role, content=content)
        render_message(message, MessageState(), markdown=MarkdownBudget, lang="en")

    def api(role: str, content: str) -> None:
        # What GET …/messages does per message: segments in the lint JSON shape.
        json.dumps([s.to_dict() for s in parse_message(content, message_id=1, role=role)])

    timings = {
        name: _best(lambda r=role, c=content: render(r, c))
        for name, (role, content) in cases().items()
    }
    timings.update(
        {
            f"api: {name}": _best(lambda r=role, c=content: api(r, c))
            for name, (role, content) in cases().items()
        }
    )
    split = split_message()
    split_time = _best(lambda: render("assistant", split))
    blocks = lexer_cases()
    lexers = {name: _best(lambda c=c: render("assistant", c), 1) for name, c in blocks.items()}
    for name in sorted(lexers, key=lambda n: -lexers[n])[:10]:  # the slowest, best of 3
        lexers[name] = _best(lambda c=blocks[name]: render("assistant", c))

    plain_md = renderer(budget=False)  # the same rules (links, Pygments, tables), no budget
    corpus = realistic_messages()
    plain = budgeted = float("inf")
    for _ in range(5):  # alternate, so a burst of machine load hits both alike
        plain = min(plain, _best(lambda: [plain_md.render(t) for t in corpus], 2))
        budgeted = min(budgeted, _best(lambda: [markdown_to_html(t) for t in corpus], 2))
    return {
        "timings": timings,
        "split": split_time,
        "lexers": lexers,
        "overhead": budgeted / plain,
    }


def _measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "chat.settings",
            # Never used (rendering does no queries), but never the developer's database.
            "DATABASE_URL": f"sqlite:///{Path(tmp) / 'unused.sqlite3'}",
            "PYTHONPATH": str(ROOT),
        }
        proc = subprocess.run(
            [sys.executable, "-m", "bench.bench_adversarial", "--child"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run() -> dict[str, dict[str, Any]]:
    """Measure; each result is ``{"value", "unit", "target"}`` (value <= target)."""
    return _results(_measure())


def _results(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    timings: dict[str, float] = data["timings"]
    worst = max(timings, key=lambda name: timings[name])
    worst_lexer = max(data["lexers"], key=lambda name: data["lexers"][name])
    return {
        "adversarial_worst_render_seconds": {
            "value": round(timings[worst], 3),
            "unit": "s",
            "target": 0.5,
            "note": f"worst of {len(timings)} cases: {worst}",
        },
        "adversarial_split_render_seconds": {
            "value": round(data["split"], 3),
            "unit": "s",
            "target": 0.5,
            "note": "200k chars of under-budget Markdown segments: one budget per message",
        },
        "adversarial_worst_lexer_render_seconds": {
            "value": round(data["lexers"][worst_lexer], 3),
            "unit": "s",
            "target": 0.5,
            "note": f"worst of {len(data['lexers'])} fenced blocks, every lexer: {worst_lexer}",
        },
        "markdown_budget_overhead_ratio": {
            "value": round(data["overhead"], 3),
            "unit": "x",
            "target": 1.1,
        },
    }


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        print(json.dumps(_child()))
    else:
        data = _measure()
        for name, seconds in sorted(data["timings"].items(), key=lambda kv: -kv[1]):
            print(f"{seconds:8.3f} s  {name}")
        for name, seconds in sorted(data["lexers"].items(), key=lambda kv: -kv[1])[:20]:
            print(f"{seconds:8.3f} s  {name}")
        for name, result in _results(data).items():
            print(f"{name}: {result['value']} {result['unit']} (target {result['target']})")
