"""What an answer to an ask means: a clicked option, a scale value, or typed text read
against the options (spec 004 §4-5) — its value, readable text and confidence."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.metadata import AskPayload
from questionnaires.asks.extract import (
    CONFIDENCE_CLICK,
    CONFIDENCE_EXACT,
    CONFIDENCE_VERBATIM,
    extract,
)
from questionnaires.asks.models import StructuredAnswer
from questionnaires.protocol.ask_payload import option_for_value, scale_value
from questionnaires.protocol.jsontypes import Json

Source = StructuredAnswer.Source
MAX_TEXT = 2000


@dataclass(frozen=True)
class Resolved:
    value: Json
    display_text: str
    confidence: float
    raw_text: str = ""
    extracted: bool = False


def _refuse(ask: AskPayload, value: object) -> ChatError:
    return ChatError(
        "answer_value_invalid",
        _("“%(value)s” is not one of the offered answers for “%(question)s”.")
        % {"value": value, "question": ask["question"]},
        details={"field": ask["field"]},
    )


def _resolve_click(ask: AskPayload, value: object) -> Resolved | None:
    if ask["type"] == "scale":
        number = scale_value(ask, value)
        return None if number is None else Resolved(number, str(number), CONFIDENCE_CLICK)
    option = option_for_value(ask, value)
    if option is None:
        return None
    return Resolved(option["value"], option["label"], CONFIDENCE_CLICK)


def _resolve_text(ask: AskPayload, text: str) -> Resolved | None:
    text = text.strip()
    if not text:
        raise ChatError("answer_text_required", _("Type an answer first."))
    if len(text) > MAX_TEXT:
        raise ChatError(
            "answer_text_too_long",
            _("Answers are limited to %(n)s characters.") % {"n": MAX_TEXT},
            status=413,
        )
    if ask["type"] == "free_text_only":
        return Resolved(text, text, CONFIDENCE_EXACT, raw_text=text)
    found = extract(ask, text)
    if found is not None:
        return Resolved(found.value, found.display_text, found.confidence, text, extracted=True)
    if ask["allow_free_text"]:
        return Resolved(text, text, CONFIDENCE_VERBATIM, raw_text=text)
    return None


def answer_resolve(ask: AskPayload, *, source: str, value: object, text: str) -> Resolved | None:
    """Value, readable text and confidence of an answer; ChatError when it is refused."""
    if source == Source.SKIPPED:
        return None
    if source == Source.FREE_TEXT and value is not None and ask["type"] != "free_text_only":
        # A value read from the person's words by conversation repair (issue 36): the
        # value as offered, the words kept; the words must fit in an answer.
        clicked = _resolve_click(ask, value)
        if clicked is not None and 0 < len(text.strip()) <= MAX_TEXT:
            return Resolved(
                clicked.value, clicked.display_text, CONFIDENCE_EXACT, text.strip(), True
            )
    if source == Source.OPTION_CLICK and ask["type"] != "free_text_only":
        resolved = _resolve_click(ask, value)
        if resolved is not None:
            return resolved
        if not ask["allow_free_text"]:
            raise _refuse(ask, value)
        text = text or ("" if value is None else str(value))
    resolved = _resolve_text(ask, text or ("" if value is None else str(value)))
    if resolved is None:
        raise _refuse(ask, text)
    return resolved
