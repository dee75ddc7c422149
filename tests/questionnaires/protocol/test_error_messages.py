"""``make_error``: localized messages from the catalogs, details kept JSON-safe."""

from __future__ import annotations

import importlib

import pytest

from questionnaires.protocol.error_messages import make_error


def test_the_module_is_named_error_messages() -> None:
    # ``messages`` clashed with the Message model's name elsewhere in the project.
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("questionnaires.protocol.messages")


def test_make_error_localizes_and_keeps_details() -> None:
    english = make_error("questionnaire.start.questions_empty", "questions", "en")
    chinese = make_error("questionnaire.start.questions_empty", "questions", "zh-hans")
    assert english.message == "`questions` must not be empty."
    assert chinese.message == "`questions` 不能为空数组。"
    error = make_error("questionnaire.json.too_large", "", "en", size=9, limit=8)
    assert error.details == {"size": 9, "limit": 8}
    assert "9" in error.message and "8" in error.message


def test_words_in_details_are_translated_in_messages_only() -> None:
    error = make_error(
        "questionnaire.default.type_invalid", "questions[1].default", "zh-hans",
        expected="a string", received_type="number",
    )  # fmt: skip
    assert error.details["expected"] == "a string"
    assert error.message == "`default` 必须是字符串（实际为 number）。"
