"""The ``questionnaire_async`` tool: validate + normalize, return at once (spec 000,
DESIGN §5).  Codes are ``questionnaire.start.*``; errors accumulate across questions;
paths are 1-based and name the field (``questions[2].options[3]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .catalogs import text
from .normalize import normalize, normalize_arguments, question_from_dict
from .segments import Questionnaire, ToolResultInvalid

START_PREFIX = "questionnaire.start"


def questionnaire_async(arguments: Any, *, lang: str = "zh-hans") -> dict[str, Any]:
    """Validate and normalize ``questionnaire_async`` arguments.

    Returns the success result (``status: awaiting_user_input``, normalized
    ``questions``, ``should_end: true``) or the ``INVALID_ARGUMENT`` failure with every
    error.  A success result gets ``notes`` (after ``message``) only when something was
    accepted leniently (an ignored field, an integer id, a repeated default), so the
    model learns about it; otherwise both shapes are exactly spec 000's.  Never raises,
    whatever ``arguments`` is.
    """
    out = normalize(arguments, prefix=START_PREFIX, lang=lang)
    title, questions, errors = out.title, out.questions, out.errors
    if errors:
        return {
            "success": False,
            "status": "error",
            "error_code": "INVALID_ARGUMENT",
            "validation_passed": False,
            "errors": [e.to_dict() for e in errors],
        }
    count = len(questions)
    message = text("text.started_one" if count == 1 else "text.started", lang, count=str(count))
    result = {
        "success": True,
        "status": "awaiting_user_input",
        "validation_passed": True,
        "title": title,
        "question_count": count,
        "questions": questions,
        "should_end": True,
        "message": message,
    }
    if out.notes:
        result["notes"] = [note.to_dict() for note in out.notes]
    return result


def questionnaire_from_tool_result(
    result: Mapping[str, Any], *, tool_call_id: str
) -> Questionnaire:
    """The questionnaire of a successful ``questionnaire_async`` result; its id is the
    tool call id.  The questions are re-normalized, so a tampered result can't produce
    an invalid card.  Raises :class:`ToolResultInvalid` for failed results."""
    if not isinstance(result, Mapping) or result.get("success") is not True:
        raise ToolResultInvalid(())
    title, questions, errors = normalize_arguments(
        {"title": result.get("title"), "questions": result.get("questions")},
        prefix=START_PREFIX,
        lang="en",
    )
    if errors:
        raise ToolResultInvalid(tuple(errors))
    return Questionnaire(
        name="questionnaire",
        questionnaire_id=tool_call_id,
        title=title,
        questions=tuple(question_from_dict(q) for q in questions),
    )
