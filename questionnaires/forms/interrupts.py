"""A deferred form as a machine client sees it (AG-UI interrupts, `chat.edge.agui`): its
questions, a JSON Schema of the answers (by question id, option values as the form's
envelope carries them), and its answer through the same `interactive_form_answer` as a
Send (or Cancel) in the page — the tool result and the readable answer message are the
same whichever way it came."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation
from questionnaires.forms.answers import interactive_form_answer
from questionnaires.forms.models import (
    TOOL_NAME,
    FormQuestion,
    FormStatus,
    InteractiveForm,
    form_questions,
)
from questionnaires.forms.services import MAX_ANSWER_MESSAGE
from questionnaires.protocol.interactive_form_answers import MAX_TEXT_ANSWER
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.registry import Pending

PAYLOAD_KEYS = frozenset({"answers", "message", "touched"})


def _pending(conversation: Conversation, ref: str) -> InteractiveForm | None:
    prefix, _sep, pk = ref.partition(":")
    if prefix != "form" or not pk.isdigit():
        return None
    return InteractiveForm.objects.filter(
        conversation=conversation, pk=int(pk), status=FormStatus.PENDING
    ).first()


def _question_schema(question: FormQuestion) -> dict[str, JsonValue]:
    schema: dict[str, JsonValue] = {"title": question["question"]}
    if question["input_type"] == "choice":
        choice: dict[str, JsonValue] = {
            "oneOf": [{"const": o["value"], "title": o["label"]} for o in question["options"]]
        }
        if question.get("multi_select"):
            schema.update(type="array", items=choice, uniqueItems=True)
            if question["required"]:
                schema["minItems"] = 1
        else:
            schema.update(type="string", **choice)
    else:
        schema.update(type="string", maxLength=MAX_TEXT_ANSWER)
        if question["required"]:
            schema["minLength"] = 1
    default = question.get("default")
    if default is not None:
        schema["default"] = default
    return schema


def response_schema(form: InteractiveForm) -> dict[str, JsonValue]:
    """`{"answers": {question id: value}, "message"?: text, "touched"?: [question id]}`:
    a single choice or text is a string, a multiple choice a list of option values;
    `touched` names questions the person set even where they left the default (else an
    answer equal to the default is recorded as "kept the default")."""
    questions = form_questions(form.render_payload)
    ids: list[JsonValue] = [q["id"] for q in questions]
    return {
        "type": "object",
        "properties": {
            "answers": {
                "type": "object",
                "properties": {q["id"]: _question_schema(q) for q in questions},
                "required": [q["id"] for q in questions if q["required"]],
                "additionalProperties": False,
            },
            "message": {
                "type": "string",
                "maxLength": MAX_ANSWER_MESSAGE,
                "description": _("A note from the person sent with the answers."),
            },
            "touched": {
                "type": "array",
                "items": {"enum": ids},
                "uniqueItems": True,
                "description": _(
                    "Questions the person set themselves: an answer equal to the default "
                    "is recorded as chosen, not as the default kept."
                ),
            },
        },
        "required": ["answers"],
        "additionalProperties": False,
    }


def form_pending_for_client(conversation: Conversation, ref: str) -> Pending | None:
    form = _pending(conversation, ref)
    if form is None:
        return None
    questions = form_questions(form.render_payload)
    return Pending(
        # the form has no title of its own: its questions are what the person reads
        message="\n".join(q["question"] for q in questions),
        response_schema=response_schema(form),
        tool_call_id=form.tool_use_id,
    )


def form_resolve_for_client(
    *, conversation: Conversation, ref: str, payload: object, user: User, lang: str
) -> None:
    """Answer the form (`payload` per `response_schema`) or cancel it (`None`); the
    checks are the page's: 400 `interactive_form_answer_invalid` with `details.fields`
    (question id → what is wrong), 409 `interactive_form_not_pending`."""
    form = _pending(conversation, ref)
    if form is None:
        raise ChatError(
            "interactive_form_not_pending",
            _("There is no form waiting for an answer in this conversation."),
            status=409,
        )
    answer: dict[str, object] = {"type": TOOL_NAME, "tool_use_id": form.tool_use_id}
    if payload is None:
        answer["status"] = FormStatus.CANCELLED
    elif isinstance(payload, dict) and "answers" in payload and set(payload) <= PAYLOAD_KEYS:
        answer.update(payload, status=FormStatus.ANSWERED)
    else:
        raise ChatError(
            "interrupt_payload_invalid",
            _('The answer must be {"answers": {…}} (see responseSchema).'),
        )
    interactive_form_answer(conversation=conversation, payload=answer)
