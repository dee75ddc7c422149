"""``build_response``: the envelope of DESIGN §4.10 and the readable text of §4.11."""

from __future__ import annotations

import json

import pytest

from questionnaires.protocol import (
    OTHER_VALUE,
    AnswerInvalid,
    Option,
    Question,
    Questionnaire,
    ResponseSegment,
    build_response,
    parse_message,
)

SINGLE = Question(
    id="q1",
    type="single_choice",
    text="是否继续当前任务？",
    options=(Option("继续", "继续"),),
    default="继续",
)
MULTI = Question(
    id="q2",
    type="multi_choice",
    text="Extras?",
    options=(Option("docker", "Docker"), Option("ci", "CI")),
    default=(),
    allow_other=True,
)
TEXT = Question(id="q3", type="free_text", text="Notes?", default="")


def _questionnaire(name: str = "questionnaire", *questions: Question) -> Questionnaire:
    return Questionnaire(
        name=name,
        questionnaire_id="MESSAGE_ID_q1",
        title="任务已暂停",
        questions=questions or (SINGLE,),
    )


def test_spec_example_envelope_exactly() -> None:
    """The spec's envelope, key for key and in order, plus the additive ``provenance``
    (issue 27) after the spec's keys of each answer."""
    built = build_response(_questionnaire(), {"q1": "继续"})
    assert built.envelope == (
        '<questionnaire-response>{"type":"questionnaire_response","questionnaire_id":'
        '"MESSAGE_ID_q1","status":"submitted","answers":[{"question_id":"q1","question":'
        '"是否继续当前任务？","type":"single_choice","answer":"继续","value":"继续","label":"继续",'
        '"provenance":"default"}]}'
        "</questionnaire-response>"
    )
    assert built.display == "任务已暂停\n是否继续当前任务？: 继续 (kept the default)"


def test_sage_name_uses_sage_type_and_tag() -> None:
    built = build_response(_questionnaire("sage-questionnaire"), {"q1": "继续"})
    assert built.envelope.startswith(
        '<sage-questionnaire-response>{"type":"sage_questionnaire_response"'
    )
    assert built.envelope.endswith("</sage-questionnaire-response>")


def test_multi_choice_and_other() -> None:
    q = _questionnaire("questionnaire", SINGLE, MULTI, TEXT)
    built = build_response(
        q,
        {"q1": "继续", "q2": ["ci", OTHER_VALUE, "docker"], "q3": "none"},
        other_text={"q2": " Kubernetes "},
    )
    answers = built.payload["answers"]
    assert answers[1] == {
        "question_id": "q2",
        "question": "Extras?",
        "type": "multi_choice",
        "answer": ["docker", "ci", "Kubernetes"],
        "values": ["docker", "ci", OTHER_VALUE],
        "labels": ["Docker", "CI", "Other"],
        "other_text": "Kubernetes",
        "provenance": "free_text",
    }
    assert answers[2] == {
        "question_id": "q3",
        "question": "Notes?",
        "type": "free_text",
        "answer": "none",
        "provenance": "free_text",
    }
    assert built.display.splitlines() == [
        "任务已暂停",
        "是否继续当前任务？: 继续 (kept the default)",
        "Extras?: Docker, CI, Other: Kubernetes",
        "Notes?: none",
    ]


def test_the_envelope_carries_values_and_the_readable_text_labels() -> None:
    """Sage sends the chosen option's value; people read its label (issue 25 item 3)."""
    single = Question(
        "q1", "single_choice", "Next?", (Option("continue", "继续"), Option("stop", "停止"))
    )
    multi = Question(
        "q2", "multi_choice", "Where?", (Option("eu", "Europe"), Option("us", "Americas"))
    )
    q = _questionnaire("questionnaire", single, multi, TEXT)
    built = build_response(q, {"q1": "continue", "q2": ["us", "eu"], "q3": "  as is \n"})
    first, second, third = built.payload["answers"]
    assert (first["answer"], first["value"], first["label"]) == ("continue", "continue", "继续")
    # multiple choice in the order the options are listed, whatever the click order
    assert second["answer"] == second["values"] == ["eu", "us"]
    assert second["labels"] == ["Europe", "Americas"]
    assert third["answer"] == "as is"  # free text is trimmed
    assert built.display.splitlines() == [
        "任务已暂停",
        "Next?: 继续",
        "Where?: Europe, Americas",
        "Notes?: as is",
    ]


def test_single_other_in_chinese() -> None:
    question = Question(
        id="q1",
        type="single_choice",
        text="颜色",
        options=(Option("红", "红"),),
        default="红",
        allow_other=True,
    )
    built = build_response(
        _questionnaire("questionnaire", question),
        {"q1": OTHER_VALUE},
        other_text={"q1": "蓝"},
        lang="zh-hans",
    )
    answer = built.payload["answers"][0]
    assert answer["value"] == OTHER_VALUE
    assert answer["label"] == "其他"
    assert answer["other_text"] == "蓝"
    assert built.display == "任务已暂停\n颜色：其他：蓝"


def test_other_text_only_while_other_selected() -> None:
    q = _questionnaire("questionnaire", MULTI)
    built = build_response(q, {"q2": ["ci"]}, other_text={"q2": "ignored"})
    assert "other_text" not in built.payload["answers"][0]


def test_errors_accumulate() -> None:
    q = _questionnaire("questionnaire", SINGLE, MULTI, TEXT)
    with pytest.raises(AnswerInvalid) as info:
        build_response(q, {"q1": "nope", "q2": [OTHER_VALUE], "q3": 5, "zz": "x"})
    codes = [(e.code, e.path) for e in info.value.errors]
    assert codes == [
        ("answer.question_unknown", "zz"),
        ("answer.option_invalid", "q1"),
        ("answer.other_text_required", "q2"),
        ("answer.type_invalid", "q3"),
    ]


@pytest.mark.parametrize(
    ("answers", "code"),
    [
        ({}, "answer.required"),
        ({"q1": ""}, "answer.required"),
        ({"q1": OTHER_VALUE}, "answer.other_not_allowed"),
        ({"q1": ["继续"]}, "answer.type_invalid"),
    ],
)
def test_single_choice_errors(answers: dict[str, object], code: str) -> None:
    with pytest.raises(AnswerInvalid) as info:
        build_response(_questionnaire(), answers)  # type: ignore[arg-type]
    assert [e.code for e in info.value.errors] == [code]


def test_multi_choice_string_is_type_error() -> None:
    with pytest.raises(AnswerInvalid) as info:
        build_response(_questionnaire("questionnaire", MULTI), {"q2": "ci"})
    assert info.value.errors[0].code == "answer.type_invalid"


def test_empty_multi_and_text_allowed() -> None:
    built = build_response(_questionnaire("questionnaire", MULTI, TEXT), {})
    assert built.payload["answers"][0]["values"] == []
    assert built.display.splitlines()[1:] == ["Extras?: (no answer)", "Notes?: (no answer)"]


def test_envelope_parses_back_in_a_user_message() -> None:
    q = _questionnaire("questionnaire", SINGLE, MULTI, TEXT)
    built = build_response(q, {"q1": "继续", "q2": ["docker"], "q3": 'quote " and </tag>'})
    segments = parse_message(built.envelope, message_id="u", role="user")
    assert len(segments) == 1
    segment = segments[0]
    assert isinstance(segment, ResponseSegment)
    assert segment.payload == built.payload
    assert (
        json.loads(
            built.envelope[len("<questionnaire-response>") : -len("</questionnaire-response>")]
        )
        == built.payload
    )
