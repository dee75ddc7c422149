"""Table tests for the ``interactive_form_question`` normalizer and answer check.

Cases live in ``cases/interactive_form.yaml`` and ``cases/interactive_form_answers.yaml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from questionnaires.protocol import normalize_interactive_form, validate_form_answers

CASES = Path(__file__).parent / "cases"


def _load(name: str) -> Any:
    with (CASES / name).open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


NORMALIZE_CASES = _load("interactive_form.yaml")
ANSWER_TABLE = _load("interactive_form_answers.yaml")


@pytest.mark.parametrize("case", NORMALIZE_CASES, ids=[c["name"] for c in NORMALIZE_CASES])
def test_normalize(case: dict[str, Any]) -> None:
    result = normalize_interactive_form(case["arguments"])
    if "errors" in case:
        assert not result.ok
        assert result.questions == []
        assert [[e["code"], e["path"]] for e in result.errors] == case["errors"]
        assert all(e["message"] for e in result.errors)
        return
    assert result.ok, result.errors
    assert len(result.questions) == len(case["questions"])
    for actual, expected in zip(result.questions, case["questions"], strict=True):
        for key, value in expected.items():
            assert actual[key] == value, key


def test_normalized_questions_have_every_key() -> None:
    result = normalize_interactive_form(
        {"questions": [{"question": "A"}, {"question": "B", "options": ["x"]}]}
    )
    keys = {
        "id",
        "question",
        "input_type",
        "options",
        "multi_select",
        "multiline",
        "required",
        "default",
        "placeholder",
    }
    assert all(set(q) == keys for q in result.questions)


def test_normalizing_twice_is_stable() -> None:
    arguments = {"questions": [*NORMALIZE_CASES[0]["arguments"]["questions"], {"question": "T"}]}
    first = normalize_interactive_form(arguments).questions
    again = normalize_interactive_form({"questions": first}).questions
    assert again == first


def test_messages_in_chinese() -> None:
    result = normalize_interactive_form({"questions": []}, lang="zh-hans")
    assert result.errors[0]["message"] == "`questions` 不能为空数组。"


ANSWER_QUESTIONS = normalize_interactive_form(ANSWER_TABLE["form"]).questions


@pytest.mark.parametrize(
    "case", ANSWER_TABLE["cases"], ids=[c["name"] for c in ANSWER_TABLE["cases"]]
)
def test_answers(case: dict[str, Any]) -> None:
    result = validate_form_answers(ANSWER_QUESTIONS, case["answers"])
    if "errors" in case:
        assert [[e["code"], e["path"]] for e in result.errors] == case["errors"]
        assert result.answers == {}
    else:
        assert result.ok, result.errors
        assert result.answers == case["cleaned"]


SCALARS = (
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", " ", "a", "b", "q1"])
)
VALUES = SCALARS | st.lists(
    SCALARS | st.fixed_dictionaries({"label": SCALARS, "value": SCALARS}), max_size=3
)
KEYS = st.sampled_from(
    [
        "id",
        "question",
        "title",
        "input_type",
        "type",
        "options",
        "default",
        "required",
        "multi_select",
    ]
)
QUESTION = st.dictionaries(KEYS, VALUES, max_size=6) | SCALARS


@given(st.fixed_dictionaries({"questions": st.lists(QUESTION, max_size=4)}))
def test_never_raises_and_is_either_ok_or_errors(arguments: dict[str, Any]) -> None:
    result = normalize_interactive_form(arguments)
    assert bool(result.questions) != bool(result.errors)
    if result.ok:
        again = normalize_interactive_form({"questions": result.questions})
        assert again.questions == result.questions
