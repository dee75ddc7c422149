"""Issue 38 item 1: the scanner's speed-up changes nothing it finds. For any text —
hypothesis-made from the pieces that steer it (fences of backticks and tildes, indented,
in quotes and lists, unclosed; tags and escaped tags, JSON and YAML bodies, code spans,
headings, breaks, blank lines, CRLF) — and for the benchmarks' corpora, the fast scanner
returns exactly the blocks of the reference (the scanner as it was, kept in
`reference_scanner.py`)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.corpus import SHAPES, adversarial, realistic_messages
from questionnaires.protocol.names import RENDERED_NAMES, SELF_CHECK_NAMES, response_names
from questionnaires.protocol.scanner import scan

from . import reference_scanner

PIECES = [
    "```questionnaire\n", "```\n", "````\n", "~~~\n", "~~~questionnaire\n", "``` x\n",
    "  ```\n", "   ~~~\n", "    ```\n", "\t```\n", "> ```questionnaire\n", "> ```\n", ">\n",
    "- ```\n", "1. ```questionnaire\n", "  - item\n", "* ", "- ", "1) ", "> ", "  # ",
    "<questionnaire>", "</questionnaire>", "<sage-questionnaire>", "</sage-questionnaire>",
    "&lt;questionnaire&gt;", "&lt;/questionnaire&gt;", "<questionnaire/>",
    "<questionnaire-response>", "</questionnaire-response>",
    '{"title": "T", "questions": [{"type": "free_text", "text": "Q"}]}',
    "title: T\nquestions:\n  - type: free_text\n    text: Q\n",
    "`", "``", "`code`", "# Heading\n", "## ", "---\n", "***\n", "===\n", "___\n",
    "Intro text. ", "word ", "你好", "\n", "\n\n", "\r\n", "\r", "  ", "\t", "    indented\n",
    "=", "-", "+", "_", "9", "#", "\u00a0", "\v",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
CLOSERS = SELF_CHECK_NAMES | response_names(SELF_CHECK_NAMES)


def _same(text: str) -> None:
    for fence_names, tag_names in (
        (RENDERED_NAMES, RENDERED_NAMES),  # an assistant's message
        (frozenset(), response_names(RENDERED_NAMES)),  # a person's
    ):
        names = {"fence_names": fence_names, "tag_names": tag_names, "closer_names": CLOSERS}
        fast = [dataclasses.astuple(b) for b in scan(text, **names)]
        assert fast == [dataclasses.astuple(b) for b in reference_scanner.scan(text, **names)]


@settings(max_examples=1500, deadline=None)
@given(texts)
def test_any_text_scans_as_the_reference_scans_it(text):
    _same(text)


JSON = '{"title": "T", "questions": [{"type": "free_text", "text": "Q"}]}'
# What a line starts with decides what it is (the speed-up reads the first character):
# every kind of start, on a line where it decides whether a tag is code or prose.
STARTS = ["# ", "  # ", "#x", "- ", "* ", "+ ", "1. ", "1) ", "> ", ">", "    ", "\t", "  ",
          "```", "~~~", "---", "===", "___", "***", "9", "x", "你", "<", "`", "\r", ""]  # fmt: skip


def _around(start: str) -> list[str]:
    tag = f"<questionnaire>{JSON}</questionnaire>"
    return [
        f"Intro\n\n{start}Head `x\n{tag} `\n",  # a span across a heading's end
        f"Intro\n\n{start}Head `x\n{start}{tag} `\n",
        f"Intro\n\n```\n{start}x\n{tag}\n```\n{tag}\n",  # in and after a fence
        f"Intro\n\n~~~~\n{start}~~~~\n{tag}\n",
        f"Intro\n\n- item\n  ```\n{start}x\n  ```\n{tag}\n",  # a container's fence
        f"Intro\n> ```\n{start}{tag}\n> ```\n{tag}\n",
        f"Intro\n\n```questionnaire\n{start}title: T\n```\n",
        f"Intro\n{start}\n{tag}\n\n{start}`{tag}`\n",
        f"Intro\n\n{start}item\n    ```\n{tag}\n    ```\n{tag}\n",  # a list item's own fence
        f"Intro\n\n{start}item\n    ~~~\n{tag}\n    ~~~\n{tag}\n",
        f"Intro\n\n{start}\n    {tag}\n\n{start}x\n    {tag}\n",  # indented: code or text
    ]


def test_every_line_start_scans_as_the_reference_scans_it():
    for start in STARTS:
        for text in _around(start):
            _same(text)


def test_the_benchmark_corpora_scan_as_the_reference_scans_them():
    for text in realistic_messages(120):
        _same(text)
    for shape in SHAPES:
        _same(adversarial(50_000, shape))
