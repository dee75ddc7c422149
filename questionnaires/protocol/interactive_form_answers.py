"""A user's answers to a deferred form (spec 003), checked against its normalized
questions (``interactive_form.normalize_interactive_form``). Pure Python.

Errors are ``interactive_form.answer.<suffix>`` with paths ``answers.<question id>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .interactive_form import _allowed, _Errors, _received, _show

MAX_TEXT_ANSWER = 10_000


@dataclass(frozen=True)
class AnswerCheck:
    """The outcome of :func:`validate_form_answers`: cleaned answers or per-field errors."""

    answers: dict[str, str | list[str]] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def validate_form_answers(
    questions: list[dict[str, Any]], answers: Any, *, lang: str = "en"
) -> AnswerCheck:
    """Check a user's answers ``{question_id: value | [values]}`` against normalized
    questions: known ids, required answers present, option membership, sizes.

    Single choice and text answers are strings; multiple choice answers are lists of
    option values (a lone string is accepted as a one-item list).  Missing optional
    answers become ``""`` / ``[]``.  Errors have paths ``answers.<question id>``.
    """
    errors = _Errors(lang)
    if not isinstance(answers, dict):
        errors.add("answer.answers_invalid", "answers", received=_received(answers))
        return AnswerCheck(errors=errors.items)
    known = {q["id"] for q in questions}
    for key in answers:
        if key not in known:
            errors.add("answer.unknown_question", f"answers.{key}", id=_show(key))
    cleaned: dict[str, str | list[str]] = {}
    for question in questions:
        value = _answer(question, answers.get(question["id"]), errors)
        if value is not None:
            cleaned[question["id"]] = value
    if errors.items:
        return AnswerCheck(errors=errors.items)
    return AnswerCheck(answers=cleaned)


def _answer(question: dict[str, Any], raw: Any, errors: _Errors) -> str | list[str] | None:
    path = f"answers.{question['id']}"
    if question["input_type"] == "text":
        if raw is None:
            raw = ""
        if not isinstance(raw, str):
            errors.add("answer.wrong_type", path, expected="string", received=_received(raw))
            return None
        if len(raw) > MAX_TEXT_ANSWER:
            errors.add("answer.too_long", path, length=len(raw), limit=MAX_TEXT_ANSWER)
            return None
        if question["required"] and not raw.strip():
            errors.add("answer.required", path)
            return None
        return raw
    values = [o["value"] for o in question["options"]]
    allowed = _allowed(values)
    if question["multi_select"]:
        items = [] if raw is None or raw == "" else [raw] if isinstance(raw, str) else raw
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            errors.add("answer.wrong_type", path, expected="options", received=_received(raw))
            return None
        bad = [v for v in items if v not in values]
        for value in bad:
            errors.add("answer.not_an_option", path, value=_show(value), allowed=allowed)
        if question["required"] and not items:
            errors.add("answer.required", path)
        chosen = [v for v in values if v in items]  # option order, no duplicates
        return None if bad or (question["required"] and not items) else chosen
    if raw is None:
        raw = ""
    if not isinstance(raw, str):
        errors.add("answer.wrong_type", path, expected="option", received=_received(raw))
        return None
    if raw and raw not in values:
        errors.add("answer.not_an_option", path, value=_show(raw), allowed=allowed)
        return None
    if question["required"] and not raw:
        errors.add("answer.required", path)
        return None
    return raw
