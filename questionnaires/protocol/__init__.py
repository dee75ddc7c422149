"""The inline questionnaire protocol — pure Python (stdlib, ``yaml``, ``markdown_it``).

One implementation serves the renderer, the agent's self-check and the lint command,
so they can never disagree.  See ``README.md`` in this package for the error codes.
"""

from __future__ import annotations

from .async_tool import questionnaire_async, questionnaire_from_tool_result
from .budget import QuestionBudget
from .interactive_form import FormNormalization, normalize_interactive_form
from .interactive_form_answers import AnswerCheck, validate_form_answers
from .names import OTHER_VALUE, RENDERED_NAMES, SELF_CHECK_NAMES
from .parser import parse_message
from .prompt import SYSTEM_PROMPT, system_prompt
from .response import build_decline, build_response
from .segments import (
    AnswerInvalid,
    BuiltResponse,
    InvalidSegment,
    MarkdownSegment,
    Option,
    ProtocolError,
    ProtocolException,
    Question,
    Questionnaire,
    QuestionnaireSegment,
    ResponseSegment,
    Segment,
    SelfCheckIssue,
    SelfCheckResult,
    ToolResultInvalid,
)
from .selfcheck import self_check

__all__ = [
    "OTHER_VALUE",
    "RENDERED_NAMES",
    "SELF_CHECK_NAMES",
    "SYSTEM_PROMPT",
    "AnswerCheck",
    "AnswerInvalid",
    "BuiltResponse",
    "FormNormalization",
    "InvalidSegment",
    "MarkdownSegment",
    "Option",
    "ProtocolError",
    "ProtocolException",
    "Question",
    "Questionnaire",
    "QuestionnaireSegment",
    "ResponseSegment",
    "Segment",
    "SelfCheckIssue",
    "SelfCheckResult",
    "ToolResultInvalid",
    "QuestionBudget",
    "build_decline",
    "build_response",
    "normalize_interactive_form",
    "parse_message",
    "questionnaire_async",
    "questionnaire_from_tool_result",
    "self_check",
    "system_prompt",
    "validate_form_answers",
]
