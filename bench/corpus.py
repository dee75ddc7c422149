"""Deterministic corpora for the protocol benchmarks.

``realistic_messages`` imitates assistant replies (2–20 KB of prose, lists, code,
inline code and 0–3 questionnaires in either encoding); ``adversarial`` repeats units
designed to make a naive scanner go quadratic: unclosed fences, tag openers without
closers, long backtick runs and deeply indented lines.
"""

from __future__ import annotations

import json
import random

WORDS = [
    "the",
    "service",
    "deploys",
    "configuration",
    "database",
    "migration",
    "request",
    "response",
    "cache",
    "worker",
    "queue",
    "latency",
    "user",
    "account",
    "report",
    "budget",
    "schedule",
    "release",
    "review",
    "metric",
    "dashboard",
    "问题",
    "数据",
    "部署",
    "配置",
    "用户",
    "任务",
    "继续",
    "调整",
    "方案",
    "需求",
]

CODE = """```python
def handler(request):
    items = [item for item in request.items if item.active]
    return {"count": len(items), "ids": [i.id for i in items]}
```
"""


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    if rng.random() < 0.3:
        words.insert(rng.randint(0, len(words)), f"`{rng.choice(WORDS)}()`")
    if rng.random() < 0.2:
        words.insert(rng.randint(0, len(words)), f"**{rng.choice(WORDS)}**")
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(2, 6))) + "\n\n"


def _list(rng: random.Random) -> str:
    return "".join(f"- {_sentence(rng)}\n" for _ in range(rng.randint(2, 6))) + "\n"


def _fenced(rng: random.Random) -> str:
    options = "".join(f"      - {rng.choice(WORDS)}{i}\n" for i in range(rng.randint(2, 5)))
    return (
        "```questionnaire\n"
        f"title: {_sentence(rng)}\n"
        "questions:\n"
        "  - type: single_choice\n"
        f"    text: {_sentence(rng)}\n"
        "    options:\n"
        f"{options}"
        f"    default: {options.split()[1]}\n"
        "  - type: free_text\n"
        f"    text: {_sentence(rng)}\n"
        '    default: ""\n'
        "```\n\n"
    )


def _xml(rng: random.Random) -> str:
    body = {
        "title": _sentence(rng),
        "questions": [
            {"type": "multi_choice", "text": _sentence(rng), "options": ["A", "B", "C"]},
            {"id": "why", "type": "text", "text": _sentence(rng)},
        ],
    }
    return f"<questionnaire>{json.dumps(body, ensure_ascii=False)}</questionnaire>\n\n"


def realistic_message(rng: random.Random) -> str:
    """One assistant reply between 2 and 20 KB."""
    target = rng.randint(2_000, 20_000)
    parts = [f"# {_sentence(rng)}\n\n", _paragraph(rng)]
    blocks = [_fenced, _xml]
    questionnaires = [rng.choice(blocks)(rng) for _ in range(rng.randint(0, 3))]
    size = sum(len(p.encode()) for p in parts)
    while size < target:
        part = rng.choice((_paragraph, _paragraph, _list))(rng) if rng.random() < 0.85 else CODE
        parts.append(part)
        size += len(part.encode())
    for block in questionnaires:
        parts.insert(rng.randint(2, len(parts)), block)
    return "".join(parts)


def realistic_messages(count: int = 60, seed: int = 2024) -> list[str]:
    """``count`` deterministic realistic replies."""
    rng = random.Random(seed)  # noqa: S311 - deterministic corpus, not security
    return [realistic_message(rng) for _ in range(count)]


# One giant paragraph (no blank line): tag openers with no closer anywhere, paired
# backtick runs, deep indentation and tabs, self-closing tags.
PARAGRAPH_UNIT = (
    "<questionnaire> opener without closer `x` ``y`` <sage-questionnaire>\n"
    + " " * 60
    + "deep &lt;questionnaire&gt; escaped opener <questionnaire/>\n"
    + "`" * 50
    + " <Questionnaire > "
    + "`" * 50
    + "\n"
    + "\t" * 12
    + "deeper <questionnaire> unclosed opener { brace\n"
)
# Many short blocks: fences that open and close, blockquote and list fences, tildes,
# indented code, mismatched tags, self-closing tags.
BLOCKS_UNIT = (
    "Some prose with `code` and <questionnaire>{}</sage-questionnaire>\n"
    "\n"
    "````python\n"
    "```questionnaire\n"
    "````\n"
    "> - 1. ```\n"
    "> ```\n"
    "~~~~\n"
    "<questionnaire>{{{{\n"
    "~~~~~~~\n"
    "\n"
    "        indented <questionnaire>{}</questionnaire>\n"
    "\n"
)
# Tag blocks of every kind the scanner reads (issue 25): JSON bodies it decodes, JSON that
# never balances, openers at the ends of lines that wait for a closing tag, attributes,
# closing tags in code spans and fences, a closing tag inside a JSON string, lone CRs.
TAGS_UNIT = (
    '<questionnaire>{"title":"T </questionnaire>","questions":[]}</questionnaire> `x`\n'
    '<questionnaire id="x" lang=en>{"a": [1, {"b": "` x\n'
    "text <sage-questionnaire>\n"
    "`</questionnaire>` and\n```\n</sage-questionnaire>\n```\n"
    "<questionnaire>" + "[" * 40 + "\r"
    "&lt;questionnaire&gt;{}&lt;/questionnaire&gt;\r\n"
)
SHAPES = {"paragraph": PARAGRAPH_UNIT, "blocks": BLOCKS_UNIT, "ticks": "", "tags": TAGS_UNIT}


def _ticks(size: int) -> str:
    """Backtick runs of ever-growing length, none with a partner, between openers: a
    scanner that searches for each run's closer goes quadratic here."""
    parts, total, length = [], 0, 1
    while total < size:
        part = "`" * length + " <questionnaire> x" + ("\n" if length % 7 == 0 else " ")
        parts.append(part)
        total += len(part)
        length += 1
    return "".join(parts)


def adversarial(size: int, shape: str = "paragraph") -> str:
    """About ``size`` characters of adversarial input (same shape at every size)."""
    if shape == "ticks":
        return _ticks(size)
    unit = SHAPES[shape]
    return unit * (size // len(unit) + 1)
