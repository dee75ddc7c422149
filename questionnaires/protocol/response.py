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
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .catalogs import text
from .error_messages import make_error, type_name
from .names import OTHER_VALUE, envelope_type, response_tag
from .provenance import (
    AMENDED,
    DECLINED,
    DEFAULT,
    FREE_TEXT,
    SKIPPED,
    SUBMITTED,
    answer_provenance,
    same_answer,
)
from .segments import AnswerInvalid, BuiltResponse, ProtocolError, Question, Questionnaire

AnswerValue = str | Sequence[str]
Item = dict[str, object]  # one entry of an envelope's `answers`


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
    status: str = SUBMITTED,
    lang: str = "en",
    skipped: Collection[str] = (),
    previous: Mapping[str, object] | None = None,
    amends: int | str | None = None,
    touched: Collection[str] = (),
    typed: Mapping[str, str] | None = None,
) -> BuiltResponse:
    """Validate ``answers`` (question id → value; a list of values for multi choice)
    and build the response envelope and its readable text.

    :data:`OTHER_VALUE` selects "Other" where ``allow_other`` is set; its text comes from
    ``other_text[question_id]``.  Questions in ``skipped`` are answered empty with
    ``provenance: "skipped"`` (their posted values are ignored).  Every answer carries its
    ``provenance`` (see :mod:`.provenance`): ``touched`` lists the questions the person
    interacted with, which are never ``default`` (DESIGN §4.14).  ``previous`` is the
    payload of the answer this one replaces and ``amends`` the id of its message: answers
    that differ from it become ``amended``, the envelope gains ``amends`` and ``version``,
    and the readable text says what changed.  ``typed`` (question id → the person's words)
    marks answers read from a typed chat reply (conversation repair, issue 36):
    ``provenance: "free_text"`` with the words kept as ``typed_text``.  Raises
    :class:`AnswerInvalid` listing every problem (also ``answer.unchanged`` when a change
    changes nothing).
    """
    builder = _Builder(other_text or {}, lang)
    known = {q.id for q in questionnaire.questions}
    for qid in [*answers, *skipped, *touched]:
        if qid not in known:
            builder.error("answer.question_unknown", str(qid), question_id=qid)
    if not isinstance(status, str) or not status.strip():
        builder.error("answer.status_invalid", "status")
    items = _items(questionnaire, answers, builder, skipped, touched, typed or {})
    if builder.errors:
        raise AnswerInvalid(tuple(builder.errors))
    before = _previous_items(previous)
    if previous is not None:
        items = [_amended(item, before.get(str(item["question_id"]))) for item in items]
        if all(item["provenance"] != AMENDED for item in items) and (
            previous.get("status") != DECLINED
        ):
            builder.error("answer.unchanged", "answers")
            raise AnswerInvalid(tuple(builder.errors))
    payload = _payload(questionnaire, status, items, previous=previous, amends=amends)
    display = (
        change_text(questionnaire, payload, before, lang)
        if previous is not None
        else display_text(questionnaire, payload, lang)
    )
    return BuiltResponse(
        envelope=_envelope(questionnaire, payload), display=display, payload=payload
    )


def _items(
    questionnaire: Questionnaire,
    answers: Mapping[str, AnswerValue],
    builder: _Builder,
    skipped: Collection[str],
    touched: Collection[str],
    typed: Mapping[str, str],
) -> list[Item]:
    """Each question's answer item with its provenance (problems go to `builder`)."""
    items: list[Item] = []
    for question in questionnaire.questions:
        if question.id in skipped:
            items.append(_skipped(question))
            continue
        item = builder.answer(question, answers.get(question.id))
        if item is None:
            continue
        words = typed.get(question.id)
        if isinstance(words, str) and words.strip():
            items.append({**item, "provenance": FREE_TEXT, "typed_text": words.strip()})
        else:
            provenance = answer_provenance(question, item, touched=question.id in touched)
            items.append({**item, "provenance": provenance})
    return items


def build_decline(
    questionnaire: Questionnaire,
    *,
    lang: str = "en",
    previous: Mapping[str, object] | None = None,
    amends: int | str | None = None,
) -> BuiltResponse:
    """The envelope of a declined card (MCP's *decline*: the person would rather not
    answer): ``status: "declined"`` and no answers."""
    payload = _payload(questionnaire, DECLINED, [], previous=previous, amends=amends)
    title = questionnaire.title or text("text.untitled", lang)
    display = f"{title}\n{text('text.declined', lang)}"
    return BuiltResponse(
        envelope=_envelope(questionnaire, payload), display=display, payload=payload
    )


def _payload(
    questionnaire: Questionnaire,
    status: str,
    items: list[Item],
    *,
    previous: Mapping[str, object] | None,
    amends: int | str | None,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "type": envelope_type(questionnaire.name),
        "questionnaire_id": questionnaire.questionnaire_id,
        "status": status,
        "answers": items,
    }
    # Additive keys (issue 27) after the four of DESIGN §4.10.
    if previous is not None:
        earlier = previous.get("version")
        if amends is not None:
            payload["amends"] = amends
        payload["version"] = (earlier if isinstance(earlier, int) else 1) + 1
    return payload


def _envelope(questionnaire: Questionnaire, payload: Mapping[str, object]) -> str:
    tag = response_tag(questionnaire.name)
    # "</" is written "<\/" (same JSON value) so typed text can never close the tag early.
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return f"<{tag}>{body}</{tag}>"


def _skipped(question: Question) -> Item:
    head: Item = {
        "question_id": question.id,
        "question": question.text,
        "type": question.type,
    }
    if question.type == "multi_choice":
        head.update(answer=[], values=[], labels=[])
    elif question.type == "single_choice":
        head.update(answer="", value="", label="")
    else:
        head["answer"] = ""
    return {**head, "provenance": SKIPPED}


def _previous_items(previous: Mapping[str, object] | None) -> dict[str, Mapping[str, object]]:
    if previous is None:
        return {}
    found = previous.get("answers")
    if not isinstance(found, list):
        return {}
    return {
        str(item.get("question_id")): item
        for item in found
        if isinstance(item, Mapping) and item.get("question_id") is not None
    }


def _amended(item: Item, before: Mapping[str, object] | None) -> Item:
    """An answer of a change: ``amended`` when it differs from the earlier one, else it
    keeps the earlier provenance (a default left alone stays ``default``)."""
    if before is None or not same_answer(before, item):
        return {**item, "provenance": AMENDED}
    earlier = before.get("provenance")
    return {**item, "provenance": earlier if isinstance(earlier, str) else item["provenance"]}


def display_text(questionnaire: Questionnaire, payload: Mapping[str, Any], lang: str) -> str:
    """The readable answer: a title line, then one ``question: answer`` line each."""
    sep = text("text.separator", lang)
    lines = [questionnaire.title or text("text.untitled", lang)]
    for item in payload.get("answers", []):
        lines.append(f"{item.get('question', '')}{sep}{_marked(item, lang, sep)}")
    return "\n".join(lines)


def change_text(
    questionnaire: Questionnaire,
    payload: Mapping[str, object],
    before: Mapping[str, Mapping[str, object]],
    lang: str,
) -> str:
    """The readable change: what the answer now says, question by question, for the
    answers that changed (``new (was: old)``)."""
    sep = text("text.separator", lang)
    title = questionnaire.title or text("text.untitled", lang)
    lines = [text("text.changed_head", lang, title=title)]
    answers = payload.get("answers")
    for item in answers if isinstance(answers, list) else []:
        if not isinstance(item, Mapping) or item.get("provenance") != AMENDED:
            continue
        old = before.get(str(item.get("question_id")))
        now = _marked(item, lang, sep)
        if old is not None:
            was = _marked(old, lang, sep)
            now = text("text.changed_line", lang, now=now, was=was)
        lines.append(f"{item.get('question', '')}{sep}{now}")
    return "\n".join(lines)


def _marked(item: Mapping[str, object], lang: str, sep: str) -> str:
    """An answer's text with its provenance mark where people should see it."""
    provenance = item.get("provenance")
    if provenance == SKIPPED:
        return text("text.skipped", lang)
    shown = _answer_text(item, lang, sep)
    if provenance == DEFAULT and shown != text("text.no_answer", lang):
        return text("text.kept_default", lang, answer=shown)
    return shown


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
