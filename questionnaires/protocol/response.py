"""The answer envelope (DESIGN §4.10) and its readable twin (§4.11).

``build_response`` validates answers against the questionnaire (all problems at once)
and returns the ``<name-response>{json}</name-response>`` text the model reads, the
plain text the chat shows, and the payload dict.

The envelope's ``answer`` carries option *values*, as Sage sends them: the value is the
stable identifier an agent acts on, the label is for people.  A multi-choice ``answer``
lists the values in the order the options are listed (not the order they were clicked),
"Other" last with the typed text.  The readable text carries the labels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .catalogs import text
from .error_messages import make_error, type_name
from .names import OTHER_VALUE, envelope_type, response_tag
from .segments import AnswerInvalid, BuiltResponse, ProtocolError, Question, Questionnaire

AnswerValue = str | Sequence[str]


def other_label(lang: str) -> str:
    """The localized label of the "Other" choice."""
    return text("text.other", lang)


class _Builder:
    def __init__(self, other_text: Mapping[str, str], lang: str) -> None:
        self.other_text = other_text
        self.lang = lang
        self.errors: list[ProtocolError] = []

    def error(self, code: str, qid: str, **details: Any) -> None:
        self.errors.append(make_error(code, qid, self.lang, **details))

    def other(self, question: Question) -> str | None:
        """The typed "Other" text, or None (with an error) when it can't be used."""
        if not question.allow_other:
            self.error("answer.other_not_allowed", question.id)
            return None
        text = self.other_text.get(question.id)
        if not isinstance(text, str) or not text.strip():
            self.error("answer.other_text_required", question.id)
            return None
        return text.strip()

    def answer(self, question: Question, value: Any) -> dict[str, Any] | None:
        head = {"question_id": question.id, "question": question.text, "type": question.type}
        if question.type == "multi_choice":
            return self._multi(question, value, head)
        if question.type == "single_choice":
            return self._single(question, value, head)
        if value is None:
            value = ""
        if not isinstance(value, str):
            self.error(
                "answer.type_invalid",
                question.id,
                expected="a string",
                received_type=type_name(value),
            )
            return None
        return {**head, "answer": value.strip()}

    def _single(
        self, question: Question, value: Any, head: dict[str, Any]
    ) -> dict[str, Any] | None:
        if value is None or value == "":
            self.error("answer.required", question.id)
            return None
        if not isinstance(value, str):
            self.error(
                "answer.type_invalid",
                question.id,
                expected="a string",
                received_type=type_name(value),
            )
            return None
        if value == OTHER_VALUE:
            text = self.other(question)
            if text is None:
                return None
            label = other_label(self.lang)
            return {**head, "answer": text, "value": value, "label": label, "other_text": text}
        labels = {o.value: o.label for o in question.options}
        if value not in labels:
            self.error("answer.option_invalid", question.id, value=value, allowed=list(labels))
            return None
        return {**head, "answer": value, "value": value, "label": labels[value]}

    def _multi(self, question: Question, value: Any, head: dict[str, Any]) -> dict[str, Any] | None:
        if value is None:
            value = []
        if isinstance(value, str) or not isinstance(value, Sequence):
            self.error(
                "answer.type_invalid",
                question.id,
                expected="a list of option values",
                received_type=type_name(value),
            )
            return None
        labels = {o.value: o.label for o in question.options}
        chosen = set()
        for item in value:
            if item == OTHER_VALUE or item in labels:
                chosen.add(item)
            else:
                self.error("answer.option_invalid", question.id, value=item, allowed=list(labels))
        values = [v for v in labels if v in chosen]
        result = {
            **head,
            "answer": list(values),
            "values": values,
            "labels": [labels[v] for v in values],
        }
        if OTHER_VALUE in chosen:
            text = self.other(question)
            if text is None:
                return None
            result["answer"].append(text)
            result["values"].append(OTHER_VALUE)
            result["labels"].append(other_label(self.lang))
            result["other_text"] = text
        return result


def build_response(
    questionnaire: Questionnaire,
    answers: Mapping[str, AnswerValue],
    *,
    other_text: Mapping[str, str] | None = None,
    status: str = "submitted",
    lang: str = "en",
) -> BuiltResponse:
    """Validate ``answers`` (question id → value; a list of values for multi choice)
    and build the response envelope and its readable text.

    :data:`OTHER_VALUE` selects "Other" where ``allow_other`` is set; its text comes
    from ``other_text[question_id]``.  Raises :class:`AnswerInvalid` listing every
    problem.
    """
    builder = _Builder(other_text or {}, lang)
    known = {q.id for q in questionnaire.questions}
    for qid in answers:
        if qid not in known:
            builder.error("answer.question_unknown", str(qid), question_id=qid)
    if not isinstance(status, str) or not status.strip():
        builder.error("answer.status_invalid", "status")
    items = [builder.answer(q, answers.get(q.id)) for q in questionnaire.questions]
    if builder.errors:
        raise AnswerInvalid(tuple(builder.errors))
    payload: dict[str, Any] = {
        "type": envelope_type(questionnaire.name),
        "questionnaire_id": questionnaire.questionnaire_id,
        "status": status,
        "answers": [item for item in items if item is not None],
    }
    tag = response_tag(questionnaire.name)
    # "</" is written "<\/" (same JSON value) so typed text can never close the tag early.
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    envelope = f"<{tag}>{body}</{tag}>"
    return BuiltResponse(
        envelope=envelope, display=display_text(questionnaire, payload, lang), payload=payload
    )


def display_text(questionnaire: Questionnaire, payload: Mapping[str, Any], lang: str) -> str:
    """The readable answer: a title line, then one ``question: answer`` line each."""
    sep = text("text.separator", lang)
    lines = [questionnaire.title or text("text.untitled", lang)]
    for item in payload.get("answers", []):
        lines.append(f"{item.get('question', '')}{sep}{_answer_text(item, lang, sep)}")
    return "\n".join(lines)


def _answer_text(item: Mapping[str, Any], lang: str, sep: str) -> str:
    other = item.get("other_text")
    other_part = f"{other_label(lang)}{sep}{other}" if other else ""
    if item.get("type") == "multi_choice":
        labels = [
            label
            for label, value in zip(item.get("labels", []), item.get("values", []), strict=False)
            if value != OTHER_VALUE
        ]
        parts = labels + ([other_part] if other_part else [])
    elif other_part:
        parts = [other_part]
    else:
        shown = item.get("label", item.get("answer"))
        parts = [str(shown)] if shown else []
    if not parts:
        return text("text.no_answer", lang)
    return text("text.list_separator", lang).join(parts)
