"""``questionnaire_async``: exact success/failure shapes and every ``questionnaire.start.*`` code."""

from __future__ import annotations

from typing import Any

import pytest

from questionnaires.protocol import (
    ToolResultInvalid,
    questionnaire_async,
    questionnaire_from_tool_result,
)

from .conftest import load_cases

CASES = load_cases("async.yaml")
START_CODES = {
    "questions_must_be_list",
    "questions_empty",
    "question_not_object",
    "question_type_invalid",
    "question_text_required",
    "question_id_duplicate",
    "question_options_required",
    "question_option_invalid",
    "default_type_invalid",
    "default_value_not_in_options",
    "default_list_invalid_items",
    "allow_other_type_invalid",
    # beyond DESIGN §5's twelve (the caps of limits.py are covered in test_limits.py)
    "title_invalid",
    "question_id_invalid",
}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_failure_case(case: dict[str, Any]) -> None:
    result = questionnaire_async(case["arguments"])
    assert list(result) == ["success", "status", "error_code", "validation_passed", "errors"]
    assert result["success"] is False
    assert result["status"] == "error"
    assert result["error_code"] == "INVALID_ARGUMENT"
    assert result["validation_passed"] is False
    got = [{k: e[k] for k in ("code", "path", "details")} for e in result["errors"]]
    assert got == case["errors"]
    assert all(e["message"] for e in result["errors"])


def test_every_start_code_is_covered() -> None:
    seen = {e["code"].rsplit(".", 1)[1] for case in CASES for e in case["errors"]}
    assert seen == START_CODES


def test_spec_example_success_shape() -> None:
    arguments = {
        "title": "继续执行",
        "questions": [
            {
                "id": "action",
                "type": "single_choice",
                "text": "是否继续当前任务？",
                "options": [{"value": "continue", "label": "继续"}],
                "default": "continue",
                "allow_other": False,
            }
        ],
    }
    assert questionnaire_async(arguments) == {
        "success": True,
        "status": "awaiting_user_input",
        "validation_passed": True,
        "title": "继续执行",
        "question_count": 1,
        "questions": arguments["questions"],
        "should_end": True,
        "message": "问卷已发起并等待用户回复，共 1 题。",
    }


def test_normalization() -> None:
    result = questionnaire_async(
        {
            "questions": [
                {"type": "multiple_choice", "title": "Pick", "options": ["a", "b"]},
                {"type": "text", "text": "Why?"},
                {"type": "single_choice", "text": "One", "options": ["x", "y"]},
                {
                    "type": "single_choice",
                    "text": "Label",
                    "options": [{"value": "v", "label": "L"}],
                    "default": "v",
                },
            ]
        },
        lang="en",
    )
    assert result["success"] is True
    assert result["title"] == ""
    assert result["message"] == "Questionnaire started; waiting for the user's reply (4 questions)."
    q1, q2, q3, q4 = result["questions"]
    assert q1 == {
        "id": "q1",
        "type": "multi_choice",
        "text": "Pick",
        "options": [{"value": "a", "label": "a"}, {"value": "b", "label": "b"}],
        "default": [],
        "allow_other": False,
    }
    assert q2 == {
        "id": "q2",
        "type": "free_text",
        "text": "Why?",
        "options": [],
        "default": "",
        "allow_other": False,
    }
    assert q3["default"] == ""
    assert q4["default"] == "v"


def test_english_messages() -> None:
    result = questionnaire_async({"questions": []}, lang="en")
    assert result["errors"][0]["message"] == "`questions` must not be empty."
    result = questionnaire_async({"questions": []})
    assert result["errors"][0]["message"] == "`questions` 不能为空数组。"


@pytest.mark.parametrize(
    "arguments", [None, 3, "x", [], {"questions": None}, {"questions": [None]}]
)
def test_never_raises(arguments: Any) -> None:
    assert questionnaire_async(arguments)["success"] is False


def test_questionnaire_from_tool_result() -> None:
    result = questionnaire_async({"title": "T", "questions": [{"type": "text", "text": "Why?"}]})
    questionnaire = questionnaire_from_tool_result(result, tool_call_id="call_1")
    assert questionnaire.name == "questionnaire"
    assert questionnaire.questionnaire_id == "call_1"
    assert questionnaire.title == "T"
    assert questionnaire.questions[0].type == "free_text"


def test_questionnaire_from_failed_result() -> None:
    with pytest.raises(ToolResultInvalid):
        questionnaire_from_tool_result(questionnaire_async({"questions": []}), tool_call_id="c")


NOTE_CASES = load_cases("async_notes.yaml")


@pytest.mark.parametrize("case", NOTE_CASES, ids=[c["name"] for c in NOTE_CASES])
def test_lenient_success_notes(case: dict[str, Any]) -> None:
    result = questionnaire_async(case["arguments"], lang="en")
    assert result["success"] is True, result.get("errors")
    keys = ["success", "status", "validation_passed", "title", "question_count", "questions"]
    keys += ["should_end", "message"] + (["notes"] if case["notes"] else [])
    assert list(result) == keys
    notes = result.get("notes", [])
    assert [(n["code"], n["path"]) for n in notes] == [
        (n["code"], n["path"]) for n in case["notes"]
    ]
    for note, want in zip(notes, case["notes"], strict=True):
        assert note["message"]
        for key, value in want.get("details", {}).items():
            assert note["details"][key] == value, key
    for got, want in zip(result["questions"], case.get("questions", []), strict=False):
        for key, value in want.items():
            assert got[key] == value, key
    zh = questionnaire_async(case["arguments"], lang="zh-hans").get("notes", [])
    assert [n["code"] for n in zh] == [n["code"] for n in notes]


def test_a_normalized_result_normalizes_to_itself() -> None:
    """questionnaire_from_tool_result re-normalizes stored results: the strict rules
    must accept every shape they produce (empty defaults included)."""
    result = questionnaire_async(
        {
            "questions": [
                {"type": "single_choice", "text": "A", "options": [{"value": "v", "label": "L"}]},
                {"type": "multiple_choice", "text": "B", "options": ["x"]},
                {"type": "text", "text": "C"},
            ]
        }
    )
    again = questionnaire_async({"title": result["title"], "questions": result["questions"]})
    assert again["success"] is True
    assert again["questions"] == result["questions"]
    assert "notes" not in again
