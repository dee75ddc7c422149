"""Caps (``limits.py``): every validator rejects an over-size questionnaire with a stable
code, as an invalid segment or a failed result, in bounded time.  Never an exception."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from questionnaires.protocol import (
    InvalidSegment,
    normalize_interactive_form,
    parse_message,
    questionnaire_async,
)
from questionnaires.protocol.limits import (
    MAX_BLOCKS,
    MAX_ID_CHARS,
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    MAX_QUESTIONS,
    MAX_TEXT_CHARS,
)

LONG_TEXT = "x" * (MAX_TEXT_CHARS + 1)
LONG_OPTION = "o" * (MAX_OPTION_CHARS + 1)


def _choice(options: list[Any], **extra: Any) -> dict[str, Any]:
    return {"type": "single_choice", "text": "Q", "options": options, **extra}


def _xml(body: dict[str, Any]) -> str:
    return "<questionnaire>" + json.dumps(body, separators=(",", ":")) + "</questionnaire>"


def _fenced(yaml_body: str) -> str:
    return "Intro.\n\n```questionnaire\n" + yaml_body + "```\n"


def _yaml_question(options: list[str], text: str = "Q", default: str | None = None) -> str:
    lines = ["  - type: single_choice", f"    text: '{text}'", "    options:"]
    lines += [f"      - '{o}'" for o in options]
    lines.append(f"    default: '{default if default is not None else options[0]}'")
    return "\n".join(lines) + "\n"


def _only_invalid(content: str) -> InvalidSegment:
    segments = parse_message(content, message_id="m")
    assert "".join(s.raw for s in segments) == content
    invalid = [s for s in segments if isinstance(s, InvalidSegment)]
    assert len(invalid) == 1, [s.kind for s in segments]
    return invalid[0]


def _codes_paths(errors: Any) -> list[tuple[str, str]]:
    return [(e["code"], e["path"]) if isinstance(e, dict) else (e.code, e.path) for e in errors]


# -- the reported case: many options used to cost seconds -----------------------------


def test_three_64k_xml_blocks_of_many_options_are_cheap_and_invalid() -> None:
    body = {"title": "T", "questions": [_choice([str(i) for i in range(9500)])]}
    block = _xml(body)
    assert len(block.encode()) < 64 * 1024
    content = "Intro\n" + "\n".join([block] * 3)
    start = time.process_time()
    segments = parse_message(content, message_id="m")
    elapsed = time.process_time() - start
    assert elapsed < 5.0
    assert "".join(s.raw for s in segments) == content
    invalid = [s for s in segments if isinstance(s, InvalidSegment)]
    assert len(invalid) == 3
    for segment in invalid:
        assert _codes_paths(segment.errors) == [
            ("questionnaire.json.options_too_many", "questions[1].options")
        ]
        assert segment.errors[0].details == {"count": 9500, "limit": MAX_OPTIONS}


def test_many_distinct_options_within_the_cap_are_linear() -> None:
    options = [{"value": f"v{i}", "label": f"L{i}"} for i in range(MAX_OPTIONS)]
    questions = [_choice(options, default=f"v{MAX_OPTIONS - 1}")] * MAX_QUESTIONS
    start = time.process_time()
    result = questionnaire_async({"questions": questions})
    assert time.process_time() - start < 5.0
    assert result["success"] is True, result.get("errors")


# -- XML+JSON and questionnaire_async share the caps ---------------------------------

ASYNC_CAPS = [
    (
        "questions",
        {"questions": [{"type": "free_text", "text": "Q"}] * (MAX_QUESTIONS + 1)},
        [("questions_too_many", "questions")],
        {"count": MAX_QUESTIONS + 1, "limit": MAX_QUESTIONS},
    ),
    (
        "options",
        {"questions": [_choice([str(i) for i in range(MAX_OPTIONS + 1)])]},
        [("options_too_many", "questions[1].options")],
        {"count": MAX_OPTIONS + 1, "limit": MAX_OPTIONS},
    ),
    (
        "multi default list",
        {
            "questions": [
                {"type": "multi_choice", "text": "Q", "options": ["a"], "default": ["a"] * 101}
            ]
        },
        [("options_too_many", "questions[1].default")],
        {"count": MAX_OPTIONS + 1, "limit": MAX_OPTIONS},
    ),
    (
        "title",
        {"title": LONG_TEXT, "questions": [{"type": "free_text", "text": "Q"}]},
        [("text_too_long", "title")],
        {"length": MAX_TEXT_CHARS + 1, "limit": MAX_TEXT_CHARS},
    ),
    (
        "question text",
        {"questions": [{"type": "free_text", "text": LONG_TEXT}]},
        [("text_too_long", "questions[1].text")],
        {"length": MAX_TEXT_CHARS + 1, "limit": MAX_TEXT_CHARS},
    ),
    (
        "free-text default",
        {"questions": [{"type": "free_text", "text": "Q", "default": LONG_TEXT}]},
        [("text_too_long", "questions[1].default")],
        {"length": MAX_TEXT_CHARS + 1, "limit": MAX_TEXT_CHARS},
    ),
    (
        "option string",
        {"questions": [_choice(["a", LONG_OPTION])]},
        [("text_too_long", "questions[1].options[2]")],
        {"length": MAX_OPTION_CHARS + 1, "limit": MAX_OPTION_CHARS},
    ),
    (
        "option label",
        {"questions": [_choice([{"value": "a", "label": LONG_OPTION}])]},
        [("text_too_long", "questions[1].options[1]")],
        {"length": MAX_OPTION_CHARS + 1, "limit": MAX_OPTION_CHARS},
    ),
    (
        "id",
        {"questions": [{"id": "i" * (MAX_ID_CHARS + 1), "type": "free_text", "text": "Q"}]},
        [("text_too_long", "questions[1].id")],
        {"length": MAX_ID_CHARS + 1, "limit": MAX_ID_CHARS},
    ),
]


@pytest.mark.parametrize(
    ("arguments", "expected", "details"),
    [pytest.param(a, e, d, id=name) for name, a, e, d in ASYNC_CAPS],
)
def test_async_caps(arguments: dict[str, Any], expected: list[Any], details: Any) -> None:
    result = questionnaire_async(arguments, lang="en")
    assert result["success"] is False
    want = [(f"questionnaire.start.{code}", path) for code, path in expected]
    assert _codes_paths(result["errors"]) == want
    assert result["errors"][0]["details"] == details
    assert all(len(e["message"]) < 400 for e in result["errors"])
    zh = questionnaire_async(arguments, lang="zh-hans")["errors"][0]["message"]
    assert zh != result["errors"][0]["message"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [pytest.param(a, e, id=name) for name, a, e, _ in ASYNC_CAPS if len(_xml(a)) < 60_000],
)
def test_xml_caps(arguments: dict[str, Any], expected: list[Any]) -> None:
    segment = _only_invalid("Intro " + _xml(arguments))
    want = [(f"questionnaire.json.{code}", path) for code, path in expected]
    assert _codes_paths(segment.errors) == want


def test_at_the_caps_is_valid() -> None:
    question = {
        "id": "i" * MAX_ID_CHARS,
        "type": "single_choice",
        "text": "t" * MAX_TEXT_CHARS,
        "options": ["o" * MAX_OPTION_CHARS] + [str(i) for i in range(MAX_OPTIONS - 1)],
    }
    others = [{"type": "free_text", "text": "Q"}] * (MAX_QUESTIONS - 1)
    result = questionnaire_async({"title": "T" * MAX_TEXT_CHARS, "questions": [question, *others]})
    assert result["success"] is True, result.get("errors")


# -- fenced YAML ------------------------------------------------------------------------


FENCED_CAPS = [
    (
        "questions",
        "title: T\nquestions:\n" + _yaml_question(["a"]) * (MAX_QUESTIONS + 1),
        [("questionnaire.questions.too_many", "questions")],
    ),
    (
        "options",
        "title: T\nquestions:\n" + _yaml_question([str(i) for i in range(MAX_OPTIONS + 1)]),
        [("questionnaire.options.too_many", "questions[1].options")],
    ),
    (
        "title",
        f"title: {LONG_TEXT}\nquestions:\n" + _yaml_question(["a"]),
        [("questionnaire.text.too_long", "title")],
    ),
    (
        "question text",
        "title: T\nquestions:\n" + _yaml_question(["a"], text=LONG_TEXT),
        [("questionnaire.text.too_long", "questions[1].text")],
    ),
    (
        "option",
        "title: T\nquestions:\n" + _yaml_question(["a", LONG_OPTION], default="a"),
        [("questionnaire.text.too_long", "questions[1].options[2]")],
    ),
    (
        "free-text default",
        f"title: T\nquestions:\n  - type: free_text\n    text: Q\n    default: {LONG_TEXT}\n",
        [("questionnaire.text.too_long", "questions[1].default")],
    ),
    (
        "multi default list",
        "title: T\nquestions:\n  - type: multi_choice\n    text: Q\n    options: [a]\n"
        "    default:\n" + "      - a\n" * (MAX_OPTIONS + 1),
        [("questionnaire.options.too_many", "questions[1].default")],
    ),
]


@pytest.mark.parametrize(
    ("body", "expected"), [pytest.param(b, e, id=name) for name, b, e in FENCED_CAPS]
)
def test_fenced_caps(body: str, expected: list[Any]) -> None:
    for lang in ("en", "zh-hans"):
        segments = parse_message(_fenced(body), message_id="m", lang=lang)
        invalid = [s for s in segments if isinstance(s, InvalidSegment)]
        assert len(invalid) == 1
        assert _codes_paths(invalid[0].errors) == expected
        assert all(len(e.message) < 400 for e in invalid[0].errors)


def test_fenced_many_bad_defaults_keep_messages_short() -> None:
    options = [f"{i:03d}" + "o" * 400 for i in range(MAX_OPTIONS)]
    body = (
        "title: T\nquestions:\n  - type: multi_choice\n    text: Q\n    options:\n"
        + "".join(f"      - '{o}'\n" for o in options)
        + "    default:\n"
        + "      - nope\n" * MAX_OPTIONS
    )
    (segment,) = [s for s in parse_message(_fenced(body), message_id="m") if s.kind == "invalid"]
    assert len(segment.errors) == MAX_OPTIONS
    assert all(len(e.message) < 2000 for e in segment.errors)


# -- interactive_form_question ---------------------------------------------------------

FORM_CAPS = [
    ({"questions": [{"question": LONG_TEXT}]}, [("text_too_long", "questions[1].question")]),
    (
        {"questions": [{"question": "Q", "options": ["a", LONG_OPTION]}]},
        [("text_too_long", "questions[1].options[2]")],
    ),
    (
        {"questions": [{"question": "Q", "placeholder": LONG_TEXT}]},
        [("text_too_long", "questions[1].placeholder")],
    ),
    (
        {"questions": [{"question": "Q", "default": LONG_TEXT}]},
        [("text_too_long", "questions[1].default")],
    ),
    (
        {"questions": [{"id": "i" * (MAX_ID_CHARS + 1), "question": "Q"}]},
        [("text_too_long", "questions[1].id")],
    ),
    (
        {
            "questions": [
                {"question": "Q", "options": ["a"], "multi_select": True, "default": ["a"] * 101}
            ]
        },
        [("options_too_many", "questions[1].default")],
    ),
]


@pytest.mark.parametrize(("arguments", "expected"), FORM_CAPS)
def test_interactive_form_caps(arguments: dict[str, Any], expected: list[Any]) -> None:
    result = normalize_interactive_form(arguments)
    want = [(f"interactive_form.{code}", path) for code, path in expected]
    assert _codes_paths(result.errors) == want
    assert all(len(e["message"]) < 400 for e in result.errors)


# -- protocol blocks per message ---------------------------------------------------------


def test_blocks_past_the_cap_become_one_invalid_tail() -> None:
    content = "Intro " + "x <questionnaire/> " * (MAX_BLOCKS + 5) + "the end"
    segments = parse_message(content, message_id="m")
    assert "".join(s.raw for s in segments) == content
    blocks = [s for s in segments if s.kind != "markdown"]
    assert len(blocks) == MAX_BLOCKS + 1
    tail = blocks[-1]
    assert isinstance(tail, InvalidSegment)
    assert tail.raw.startswith("<questionnaire/>") and tail.raw.endswith("the end")
    assert tail.end == len(content)
    assert tail.ordinal == MAX_BLOCKS + 1
    assert _codes_paths(tail.errors) == [("questionnaire.blocks.too_many", "")]
    assert tail.errors[0].details == {"count": MAX_BLOCKS + 5, "limit": MAX_BLOCKS}
    assert all(b.errors[0].code == "questionnaire.tag.self_closing" for b in blocks[:-1])  # type: ignore[union-attr]


def test_at_the_block_cap_nothing_changes() -> None:
    content = "Intro " + "x <questionnaire/> " * MAX_BLOCKS
    segments = parse_message(content, message_id="m")
    assert all(
        e.code == "questionnaire.tag.self_closing"
        for s in segments
        if isinstance(s, InvalidSegment)
        for e in s.errors
    )


def test_response_blocks_past_the_cap() -> None:
    envelope = (
        '<questionnaire-response>{"questionnaire_id":"a","answers":[]}</questionnaire-response>'
    )
    content = envelope * (MAX_BLOCKS + 1)
    segments = parse_message(content, message_id="m", role="user")
    assert [s.kind for s in segments] == ["response"] * MAX_BLOCKS + ["invalid"]
    assert _codes_paths(segments[-1].errors) == [("response.blocks.too_many", "")]  # type: ignore[union-attr]


def test_many_blocks_are_cheap() -> None:
    content = "x <questionnaire/> " * 10_000
    start = time.process_time()
    segments = parse_message(content, message_id="m")
    assert time.process_time() - start < 2.5
    assert len(segments) <= 2 * MAX_BLOCKS + 2
    assert "".join(s.raw for s in segments) == content
