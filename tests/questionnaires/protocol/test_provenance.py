"""Issue 27's envelope keys: ``provenance`` per answer, ``declined``, ``amends`` and
``version`` — additive, so the keys of DESIGN §4.10 keep their order and meaning."""

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
from questionnaires.protocol.response import build_decline

DB = Question(
    id="q1",
    type="single_choice",
    text="Database?",
    options=(Option("pg", "PostgreSQL"), Option("sqlite", "SQLite")),
    default="pg",
    allow_other=True,
)
EXTRAS = Question(
    id="q2",
    type="multi_choice",
    text="Extras?",
    options=(Option("docker", "Docker"), Option("ci", "CI")),
    default=("ci", "docker"),
)
NOTES = Question(id="q3", type="free_text", text="Notes?", default="none")
CARD = Questionnaire(
    name="questionnaire", questionnaire_id="7_q1", title="Setup", questions=(DB, EXTRAS, NOTES)
)


def _provenance(answers: dict[str, object], **kwargs: object) -> list[str]:
    built = build_response(CARD, answers, **kwargs)  # type: ignore[arg-type]
    return [a["provenance"] for a in built.payload["answers"]]


def test_defaults_left_alone_are_default_and_marked_in_the_readable_text() -> None:
    built = build_response(CARD, {"q1": "pg", "q2": ["docker", "ci"], "q3": " none "})
    assert [a["provenance"] for a in built.payload["answers"]] == ["default"] * 3
    assert built.display.splitlines()[1:] == [
        "Database?: PostgreSQL (kept the default)",
        "Extras?: Docker, CI (kept the default)",
        "Notes?: none (kept the default)",
    ]


def test_chosen_and_typed_answers() -> None:
    assert _provenance({"q1": "sqlite", "q2": ["ci"], "q3": "fast please"}) == [
        "chosen",
        "chosen",
        "free_text",
    ]
    other = _provenance({"q1": OTHER_VALUE, "q2": []}, other_text={"q1": "MySQL"})
    assert other[0] == "free_text"


def test_skipped_questions_keep_their_shape_with_empty_values() -> None:
    built = build_response(
        CARD, {"q1": "not-an-option", "q2": ["ci"]}, skipped=["q1", "q3"], lang="zh-hans"
    )
    first, second, third = built.payload["answers"]
    assert first == {
        "question_id": "q1",
        "question": "Database?",
        "type": "single_choice",
        "answer": "",
        "value": "",
        "label": "",
        "provenance": "skipped",
    }  # the posted value of a skipped question is ignored, never an error
    assert second["provenance"] == "chosen"
    assert third["answer"] == "" and third["provenance"] == "skipped"
    assert built.display.splitlines()[1] == "Database?：（已跳过）"


def test_skipping_an_unknown_question_is_refused() -> None:
    with pytest.raises(AnswerInvalid) as caught:
        build_response(CARD, {"q1": "pg"}, skipped=["q9"])
    assert [e.code for e in caught.value.errors] == ["answer.question_unknown"]


def test_decline_says_declined_with_no_answers() -> None:
    built = build_decline(CARD, lang="en")
    assert built.payload == {
        "type": "questionnaire_response",
        "questionnaire_id": "7_q1",
        "status": "declined",
        "answers": [],
    }
    assert built.display == "Setup\nI’d rather not answer."
    (segment,) = parse_message(built.envelope, message_id=8, role="user")
    assert isinstance(segment, ResponseSegment)


def test_a_change_marks_what_changed_and_references_the_earlier_answer() -> None:
    first = build_response(CARD, {"q1": "pg", "q2": ["ci"], "q3": "none"})
    change = build_response(
        CARD,
        {"q1": "sqlite", "q2": ["ci"], "q3": "none"},
        previous=first.payload,
        amends=41,
    )
    payload = change.payload
    assert list(payload)[:4] == ["type", "questionnaire_id", "status", "answers"]
    assert payload["amends"] == 41 and payload["version"] == 2
    assert [a["provenance"] for a in payload["answers"]] == ["amended", "chosen", "default"]
    assert change.display.splitlines() == [
        "Changed my answer to “Setup”:",
        "Database?: SQLite (was: PostgreSQL (kept the default))",
    ]
    third = build_response(
        CARD, {"q1": "sqlite", "q2": [], "q3": "none"}, previous=payload, amends=43
    )
    assert third.payload["version"] == 3
    assert [a["provenance"] for a in third.payload["answers"]] == ["amended", "amended", "default"]


def test_a_change_that_changes_nothing_is_refused() -> None:
    first = build_response(CARD, {"q1": "pg", "q2": ["ci"]})
    with pytest.raises(AnswerInvalid) as caught:
        build_response(CARD, {"q1": "pg", "q2": ["ci"]}, previous=first.payload, amends=1)
    assert [e.code for e in caught.value.errors] == ["answer.unchanged"]


def test_answering_a_declined_card_later_is_a_change() -> None:
    declined = build_decline(CARD)
    change = build_response(CARD, {"q1": "pg"}, previous=declined.payload, amends=5)
    assert change.payload["status"] == "submitted"
    assert {a["provenance"] for a in change.payload["answers"]} == {"amended"}


def test_old_readers_that_ignore_unknown_keys_read_the_same_answer() -> None:
    """A reader of §4.10 only: the same four keys, each answer's keys of §4.10 unchanged."""
    built = build_response(CARD, {"q1": "sqlite", "q2": ["docker"], "q3": "x"})
    body = json.loads(built.envelope.removeprefix("<questionnaire-response>").split("</")[0])
    legacy = {k: body[k] for k in ("type", "questionnaire_id", "status", "answers")}
    assert [a["answer"] for a in legacy["answers"]] == ["sqlite", ["docker"], "x"]
    assert all(list(a)[-1] == "provenance" for a in legacy["answers"])


def test_self_checks_repair_request_says_what_the_marks_mean() -> None:
    """Issue 27: self-check, like the system prompt, tells the model what each mark means."""
    from questionnaires.protocol.selfcheck import self_check

    broken = "Pick one:\n\n```questionnaire\nquestions: [{type: nope}]\n```\n"
    for lang, words in (("en", "a weak answer"), ("zh-hans", "弱回答")):
        result = self_check(broken, lang=lang)
        assert not result.passed
        for mark in ("chosen", "default", "free_text", "skipped", "amended", "declined"):
            assert f"`{mark}`" in result.diagnostic
        assert words in result.diagnostic


# --- issue 32 (2): `default` only when the person never touched the question -------------


def test_a_touched_question_on_its_default_is_chosen_not_kept_default() -> None:
    """A click on the preselected option, or a change and back (DESIGN §4.14)."""
    built = build_response(
        CARD, {"q1": "pg", "q2": ["docker", "ci"], "q3": "none"}, touched=["q1", "q2", "q3"]
    )
    assert [a["provenance"] for a in built.payload["answers"]] == [
        "chosen",
        "chosen",
        "free_text",
    ]
    assert "kept the default" not in built.display


def test_only_untouched_questions_keep_the_default() -> None:
    assert _provenance({"q1": "pg", "q2": ["ci", "docker"], "q3": "none"}, touched=["q2"]) == [
        "default",
        "chosen",
        "default",
    ]


def test_a_value_that_differs_from_the_default_is_never_default_even_untouched() -> None:
    """A client that reports nothing touched can't claim a default it didn't send."""
    assert _provenance({"q1": "sqlite", "q2": ["ci"], "q3": "fast"}, touched=()) == [
        "chosen",
        "chosen",
        "free_text",
    ]


def test_touched_ids_must_name_questions() -> None:
    with pytest.raises(AnswerInvalid) as caught:
        build_response(CARD, {"q1": "pg", "q2": []}, touched=["q9"])
    assert [e.code for e in caught.value.errors] == ["answer.question_unknown"]
