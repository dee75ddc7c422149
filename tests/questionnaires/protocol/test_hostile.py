"""Hostile input: deep nesting, huge numbers, long runs.  Whatever arrives, the protocol
functions return (an invalid segment, a failed result), never raise, and what they
return can be serialized as JSON (the lint command, the API and the agent do that)."""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from questionnaires.protocol import (
    InvalidSegment,
    normalize_interactive_form,
    parse_message,
    questionnaire_async,
    self_check,
)
from questionnaires.protocol.limits import MAX_DEPTH


def _deep_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _fenced(body: str) -> str:
    return "Intro.\n\n```questionnaire\n" + body + "\n```\n"


BIG = "9" * 5000
MESSAGES = {
    "json brackets 5000": ("<questionnaire>" + "[" * 5000 + "]" * 5000 + "</questionnaire>"),
    "json objects 5000": (
        "<questionnaire>" + '{"a":' * 5000 + "1" + "}" * 5000 + "</questionnaire>"
    ),
    "json type nested 900": (
        '<questionnaire>{"questions":[{"type":' + "[" * 900 + "]" * 900 + ',"text":"x"}]}'
        "</questionnaire>"
    ),
    "json nested 40": ('<questionnaire>{"title":' + "[" * 40 + "]" * 40 + "}</questionnaire>"),
    "json unclosed brackets": "<questionnaire>{" + "[" * 20000,
    "json huge integer": (
        '<questionnaire>{"questions":[{"id":' + BIG + ',"type":"text","text":"x"}]}</questionnaire>'
    ),
    "json huge exponent": (
        '<questionnaire>{"questions":[{"id":1e999,"type":"text","text":"x"}]}</questionnaire>'
    ),
    "yaml flow brackets 5000": _fenced("title: " + "[" * 5000 + "]" * 5000),
    "yaml flow nested 900": _fenced(
        "title: T\nquestions:\n  - type: " + "[" * 900 + "]" * 900 + "\n    text: x\n"
    ),
    "yaml block sequences": _fenced("- " * 3000 + "x"),
    "yaml block mappings": _fenced("".join(" " * i + "a:\n" for i in range(300))),
    "yaml huge integer": _fenced("title: " + BIG),
    "yaml huge integer option": _fenced(
        "title: T\nquestions:\n  - type: single_choice\n    text: Q\n    options:\n"
        f"      - {BIG}\n    default: x"
    ),
    "unclosed fence of brackets": "Intro\n```questionnaire\n" + "[" * 50000,
    "tag soup": "<questionnaire>" * 20000,
    "closer soup": "</questionnaire>" * 20000,
    "escaped tag soup": "&lt;questionnaire&gt;{" * 10000,
}
RESPONSES = {
    "response nested 900": (
        '<questionnaire-response>{"questionnaire_id":"x","answers":[],"x":'
        + "[" * 900
        + "]" * 900
        + "}</questionnaire-response>"
    ),
    "response brackets 5000": "<questionnaire-response>" + "[" * 5000 + "</questionnaire-response>",
    "response huge integer": (
        '<questionnaire-response>{"questionnaire_id":"x","answers":[],"n":'
        + BIG
        + "}</questionnaire-response>"
    ),
}


def _check_message(content: str, role: str) -> list[Any]:
    for lang in ("en", "zh-hans"):
        segments = parse_message(content, message_id="m", role=role, lang=lang)
        assert "".join(s.raw for s in segments) == content
        json.dumps([s.to_dict() for s in segments], ensure_ascii=False)
        result = self_check(content, lang=lang)
        json.dumps(result.to_dict(), ensure_ascii=False)
    return segments


@pytest.mark.parametrize("name", list(MESSAGES))
def test_hostile_assistant_message(name: str) -> None:
    _check_message(MESSAGES[name], "assistant")


@pytest.mark.parametrize("name", list(RESPONSES))
def test_hostile_user_message(name: str) -> None:
    segments = _check_message(RESPONSES[name], "user")
    assert [s.kind for s in segments] == ["invalid"]


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (MESSAGES["json brackets 5000"], "questionnaire.json.too_deep"),
        (MESSAGES["json objects 5000"], "questionnaire.json.too_deep"),
        (MESSAGES["json type nested 900"], "questionnaire.json.too_deep"),
        (MESSAGES["json nested 40"], "questionnaire.json.too_deep"),
        (MESSAGES["yaml flow nested 900"], "questionnaire.yaml.too_deep"),
        (MESSAGES["yaml block mappings"], "questionnaire.yaml.too_deep"),
        (MESSAGES["json huge integer"], "questionnaire.json.syntax"),
    ],
)
def test_nesting_and_numbers_have_codes(content: str, code: str) -> None:
    (segment,) = [s for s in parse_message(content, message_id="m") if s.kind == "invalid"]
    assert isinstance(segment, InvalidSegment)
    assert [e.code for e in segment.errors] == [code]
    if code.endswith("too_deep"):
        assert segment.errors[0].details["limit"] == MAX_DEPTH


def test_nesting_at_the_limit_is_fine() -> None:
    # 5 levels are what a questionnaire needs; MAX_DEPTH leaves room for extras.
    body = '{"questions":[{"type":"text","text":"x"}],"x":' + "[" * 27 + "]" * 27 + "}"
    segments = parse_message(f"<questionnaire>{body}</questionnaire>", message_id="m")
    assert [s.kind for s in segments] == ["questionnaire"]


def test_hostile_input_with_little_stack_left() -> None:
    """The renderer may run deep inside template code: nesting must be refused by the
    depth cap, not by whatever recursion happens to be left."""
    content = MESSAGES["json type nested 900"]

    def nest(levels: int) -> list[Any]:
        return nest(levels - 1) if levels else parse_message(content, message_id="m")

    used = len(inspect.stack(0))
    segments = nest(sys.getrecursionlimit() - used - 120)
    assert [s.kind for s in segments] == ["invalid"]


ASYNC = {
    "questions deep list": {"questions": _deep_list(5000)},
    "questions deep object": {"questions": _deep_dict(5000)},
    "type deep": {"questions": [{"type": _deep_list(5000), "text": "x"}]},
    "type deep object": {"questions": [{"type": _deep_dict(5000), "text": "x"}]},
    "option deep": {
        "questions": [{"type": "single_choice", "text": "x", "options": [_deep_list(5000)]}]
    },
    "multi default deep": {
        "questions": [
            {"type": "multi_choice", "text": "x", "options": ["a"], "default": [_deep_list(5000)]}
        ]
    },
    "single default deep": {
        "questions": [
            {"type": "single_choice", "text": "x", "options": ["a"], "default": _deep_dict(5000)}
        ]
    },
    "id huge integer": {"questions": [{"id": 10**5000, "type": "text", "text": "x"}]},
    "option huge integer": {
        "questions": [{"type": "single_choice", "text": "x", "options": [10**5000]}]
    },
    "default huge integer": {"questions": [{"type": "text", "text": "x", "default": 10**5000}]},
    "title deep": {"title": _deep_list(5000), "questions": [{"type": "text", "text": "x"}]},
    "id deep": {"questions": [{"id": _deep_list(5000), "type": "text", "text": "x"}]},
    "text nan": {"questions": [{"type": "text", "text": float("nan")}]},
}


@pytest.mark.parametrize("name", list(ASYNC))
def test_hostile_async_arguments(name: str) -> None:
    for lang in ("en", "zh-hans"):
        result = questionnaire_async(ASYNC[name], lang=lang)
        json.dumps(result, ensure_ascii=False, allow_nan=False)
        assert result["success"] is False


@pytest.mark.parametrize("name", list(ASYNC))
def test_hostile_interactive_form_arguments(name: str) -> None:
    result = normalize_interactive_form(ASYNC[name])
    json.dumps(result.errors, ensure_ascii=False)


# -- properties: random hostile text never breaks parse_message --------------------------

HOSTILE_FRAGMENTS = [
    "<questionnaire>",
    "</questionnaire>",
    "<questionnaire-response>",
    "</questionnaire-response>",
    "```questionnaire\n",
    "```\n",
    "{",
    "}",
    "[",
    "]",
    '{"questions":',
    '{"a":',
    '"',
    "\\",
    "9" * 50,
    "1e999",
    "- ",
    "  ",
    "\n",
    "\r\n",
    "title: ",
    "questions:\n",
    "  - type: single_choice\n",
    "    options:\n",
    "&lt;questionnaire&gt;",
    "`",
    "\x00",
    "\u2028",
    "😀",
]
hostile = st.lists(
    st.one_of(
        st.sampled_from(HOSTILE_FRAGMENTS),
        st.tuples(st.sampled_from("[{`<*_>-"), st.integers(1, 3000)).map(lambda p: p[0] * p[1]),
        st.text(max_size=8),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(content=hostile, role=st.sampled_from(["assistant", "user"]))
def test_hostile_text_round_trips(content: str, role: str) -> None:
    segments = parse_message(content, message_id="m", role=role)
    assert "".join(s.raw for s in segments) == content
    json.dumps([s.to_dict() for s in segments])
    self_check(content)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=10)
    | st.sampled_from(["single_choice", "multi_choice", "free_text", "text", "a", ""]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["title", "questions", "type", "text", "options", "default", "id"])
            | st.text(max_size=5),
            children,
            max_size=5,
        )
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(arguments=json_values)
def test_async_never_raises_on_any_json(arguments: Any) -> None:
    result = questionnaire_async(arguments)
    json.dumps(result)
    body = json.dumps({"questions": arguments}) if not isinstance(arguments, dict) else None
    content = f"<questionnaire>{body or json.dumps(arguments)}</questionnaire>"
    segments = parse_message(content, message_id="m")
    assert "".join(s.raw for s in segments) == content
