"""An inline questionnaire card as a machine client sees it (AG-UI interrupts,
`chat.edge.agui`): the card's first open questionnaire, a JSON Schema of its answers (by
question id, option values as the envelope carries them), and its answer through the
same `questionnaire_answer` as a submit in the page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation, Message, Role
from questionnaires.inline import selectors
from questionnaires.inline.models import Submission
from questionnaires.inline.presenter import dom_id
from questionnaires.inline.services import questionnaire_answer
from questionnaires.protocol import Questionnaire
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.protocol.names import OTHER_VALUE
from questionnaires.protocol.repair import match_reply
from questionnaires.protocol.segments import Question
from questionnaires.registry import Choice, Pending, Whereabouts


def _open(conversation: Conversation, ref: str) -> tuple[Message, Questionnaire] | None:
    prefix, _sep, pk = ref.partition(":")
    if prefix != "inline" or not pk.isdigit():
        return None
    message = conversation.messages.filter(pk=int(pk), role=Role.ASSISTANT).first()
    if message is None:
        return None
    found = selectors.questionnaires_of(
        conversation_id=conversation.pk, message=message, lang=conversation.language
    )
    for questionnaire_id, questionnaire in found.items():  # the first one still open
        if selectors.questionnaire_open(conversation, questionnaire_id):
            return message, questionnaire
    return None


def _question_schema(question: Question) -> dict[str, JsonValue]:
    values: list[JsonValue] = [o.value for o in question.options]
    if question.allow_other:
        values.append(OTHER_VALUE)
    choice: dict[str, JsonValue] = {
        "oneOf": [{"const": o.value, "title": o.label} for o in question.options]
        + ([{"const": OTHER_VALUE, "title": _("Other")}] if question.allow_other else [])
    }
    if question.type == "single_choice":
        return {"title": question.text, **choice}
    if question.type == "multi_choice":
        return {"title": question.text, "type": "array", "items": choice, "uniqueItems": True}
    return {"title": question.text, "type": "string"}


def response_schema(questionnaire: Questionnaire) -> dict[str, JsonValue]:
    """`{"answers": {question id: value}, "other_text"?: {question id: text},
    "skipped"?: [question id]}`."""
    return {
        "type": "object",
        "title": questionnaire.title,
        "properties": {
            "answers": {
                "type": "object",
                "properties": {q.id: _question_schema(q) for q in questionnaire.questions},
                "additionalProperties": False,
            },
            "other_text": {"type": "object", "additionalProperties": {"type": "string"}},
            "skipped": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "touched": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "typed": {"type": "string", "title": "The words the answers were read from"},
        },
        "required": ["answers"],
        "additionalProperties": False,
    }


def inline_pending(conversation: Conversation, ref: str) -> Pending | None:
    found = _open(conversation, ref)
    if found is None:
        return None
    _message, questionnaire = found
    return Pending(
        message=questionnaire.title,
        response_schema=response_schema(questionnaire),
        choices=_choices(questionnaire),
    )


def _choices(questionnaire: Questionnaire) -> tuple[Choice, ...]:
    """One click each when the card is one single choice (a click is the person's act:
    the question is reported touched, so picking the preselected option is `chosen`)."""
    if len(questionnaire.questions) != 1 or questionnaire.questions[0].type != "single_choice":
        return ()
    question = questionnaire.questions[0]
    return tuple(
        Choice(o.label, {"answers": {question.id: o.value}, "touched": [question.id]})
        for o in question.options
    )


def inline_locate(conversation: Conversation, ref: str) -> Whereabouts | None:
    found = _open(conversation, ref)
    if found is None:
        return None
    message, questionnaire = found
    return Whereabouts(
        message_id=message.pk,
        anchor=dom_id("qc", message.pk, questionnaire.questionnaire_id),
        title=questionnaire.title,
    )


def _strings(value: object, what: str) -> Mapping[str, str | Sequence[str]]:
    if not isinstance(value, dict) or not all(
        isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
        for v in value.values()
    ):
        raise ChatError(
            "interrupt_payload_invalid",
            _("“%(what)s” must map question ids to values (see responseSchema).") % {"what": what},
        )
    return value


def inline_resolve(
    *, conversation: Conversation, ref: str, payload: object, user: User, lang: str
) -> None:
    found = _open(conversation, ref)
    if found is None:
        raise ChatError("interrupt_unknown", _("No such question is waiting."), status=404)
    message, questionnaire = found
    if payload is None:
        answers: Mapping[str, str | Sequence[str]] = {}
        other: Mapping[str, str | Sequence[str]] = {}
        skipped: list[str] = []
        touched: list[str] = []
    elif isinstance(payload, dict) and set(payload) <= {
        "answers",
        "other_text",
        "skipped",
        "touched",
        "typed",
    }:
        answers = _strings(payload.get("answers"), "answers")
        other = _strings(payload.get("other_text", {}), "other_text")
        skipped = [str(q) for q in payload.get("skipped", []) if isinstance(q, str)]
        touched = _touched(payload.get("touched", []))
    else:
        raise ChatError(
            "interrupt_payload_invalid",
            _('The answer must be {"answers": {…}} (see responseSchema).'),
        )
    questionnaire_answer(
        conversation=conversation,
        message_id=message.pk,
        questionnaire_id=questionnaire.questionnaire_id,
        answers=answers,
        other_text={k: v for k, v in other.items() if isinstance(v, str)},
        user=user,
        lang=lang,
        skipped=skipped,
        declined=payload is None,
        touched=touched,
        typed=_typed(payload, answers),
    )


def _typed(payload: object, answers: Mapping[str, object]) -> dict[str, str]:
    """`"typed"`: the person's words the answers were read from (conversation repair,
    issue 36): each answered question is then `free_text`, the words kept."""
    words = payload.get("typed") if isinstance(payload, dict) else None
    if words is None:
        return {}
    if not isinstance(words, str) or not words.strip():
        raise ChatError("interrupt_payload_invalid", _("“typed” must be the words typed."))
    return dict.fromkeys(answers, words)


def inline_amend(
    *, conversation: Conversation, ref: str, words: str, typed: str, user: User, lang: str
) -> dict[str, JsonValue] | None:
    """ "actually, make it X" (conversation repair, issue 36): the answered card `ref`'s
    latest answer changed to what `words` name, as a new version through
    `questionnaire_answer` (as "Change answer"): the other answers kept, the changed ones
    `amended` with the reply kept as `typed_text`. None when they name nothing of it."""
    prefix, _sep, pk = ref.partition(":")
    if prefix != "inline" or not pk.isdigit():
        return None
    message = conversation.messages.filter(pk=int(pk), role=Role.ASSISTANT).first()
    latest = (
        Submission.objects.filter(conversation_id=conversation.pk, message_id=int(pk))
        .order_by("-version")
        .first()
    )
    if message is None or latest is None or latest.status != Submission.Status.SUBMITTED:
        return None
    questionnaire = selectors.questionnaires_of(
        conversation_id=conversation.pk, message=message, lang=lang
    ).get(latest.questionnaire_id)
    read = match_reply(response_schema(questionnaire), words) if questionnaire else None
    new = read.payload.get("answers") if read is not None else None
    if read is None or not isinstance(new, dict) or not new:
        return None
    changed = {str(q): v for q, v in new.items() if isinstance(v, str | list)}
    questionnaire_answer(
        conversation=conversation,
        message_id=message.pk,
        questionnaire_id=latest.questionnaire_id,
        answers={**(latest.answers or {}), **changed},
        other_text={k: v for k, v in (latest.other_text or {}).items() if k not in changed},
        user=user,
        lang=lang,
        skipped=[q for q in latest.skipped or () if q not in changed],
        version=latest.version,
        touched=list(changed),
        typed=dict.fromkeys(changed, typed),
    )
    return read.payload


def _touched(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(q, str) for q in value):
        raise ChatError(
            "interrupt_payload_invalid",
            _("“touched” must be a list of question ids (see responseSchema)."),
        )
    return value
