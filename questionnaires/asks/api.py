"""JSON API for external agent runtimes: ask the user a structured question, answer one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from django.http import HttpRequest
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema
from ninja.responses import Status
from pydantic import ConfigDict

from chat.core import selectors as chat_selectors
from chat.core.errors import ChatError
from chat.core.metadata import metadata_of, state_of
from chat.edge.apibase import (
    ApiJson,
    ApiTokenAuth,
    ConversationId,
    RequestSchema,
    error_descriptions,
    errors,
)
from chat.edge.http import signed_in
from questionnaires.asks import selectors, services
from questionnaires.asks.ask_requests import ask_post
from questionnaires.asks.models import StructuredAnswer
from questionnaires.protocol.jsontypes import JsonValue

router = Router(auth=ApiTokenAuth(), tags=["asks"])
Source = StructuredAnswer.Source


class AskIn(RequestSchema):
    payload: dict[str, ApiJson] = Field(
        description="A spec-004 `ask_user_options` payload: `question`, `field`, `options` "
        "`[{label, value, icon?}]`, `allow_free_text`, `free_text_placeholder` (or a "
        "`scale`, `boolean` or `free_text_only` payload). Checked as a whole: 400 "
        "`ask_invalid` lists every problem in `details.errors`."
    )
    reference: dict[str, ApiJson] | None = Field(
        None,
        description="A knowledge reference shown with it: `title`, `snippet`, `source`, `url`.",
    )
    text: str | None = Field("", description="An assistant message shown before the question.")
    refusal_code: ClassVar[str] = "ask_invalid"
    field_codes: ClassVar[dict[str, str]] = {"text": "ask_text_invalid"}


class AskCreated(Schema):
    message_id: int
    turn_id: str


class AnswerIn(RequestSchema):
    """A spec-004 `structured_answer`."""

    type: Literal["structured_answer"] = "structured_answer"
    field: str = Field(min_length=1, description="The ask's `field`.")
    turn_id: str = Field(
        "", description="The ask's `turn_id` (the latest ask of `field` if empty)."
    )
    value: ApiJson = Field(None, description="The chosen option's `value` (None: skipped).")
    display_text: str | None = Field(
        None, description="Informational: the chat shows the option's own label."
    )
    source: Source = Field(
        Source.OPTION_CLICK,
        strict=False,
        description="`user_option_click`, `user_free_text`, `user_skipped` or `user_edit`.",
    )
    raw_text: str | None = Field(None, description="What the person typed (free text).")
    text: str | None = Field(None, description="The same as `raw_text` (older clients).")
    version: int | None = Field(
        None,
        ge=1,
        strict=True,
        description="Change an answered ask (issue 27): the id of the answer this one "
        "replaces (409 `answer_stale` when it is no longer the latest).",
    )
    field_codes: ClassVar[dict[str, str]] = {
        "version": "answer_invalid",
        "type": "answer_type_invalid",
        "source": "answer_source_invalid",
        "field": "answer_field_required",
        "turn_id": "answer_field_required",
        "raw_text": "answer_text_invalid",
        "text": "answer_text_invalid",
    }


class AnswerOut(Schema):
    model_config = ConfigDict(extra="allow")
    id: int
    type: Literal["structured_answer"]
    field: str
    value: ApiJson
    display_text: str
    raw_text: str
    source: str
    confidence: float | None
    turn_id: str
    message_id: int | None
    provenance: str = Field(
        description="How the answer came to be: `chosen`, `free_text`, `skipped`, `amended`."
    )
    amends: int | None = Field(description="The answer this one replaced, if any.")


class AnswerRecorded(Schema):
    answer: AnswerOut
    created: bool = Field(description="False: the same answer was already recorded.")
    consultation_state: dict[str, ApiJson]
    missing_slots: list[ApiJson]
    confidence: dict[str, ApiJson]


@router.post(
    "/conversations/{id:conversation_id}/asks",
    url_name="asks",
    response={201: AskCreated, **errors(409)},
    openapi_extra=error_descriptions(409),
    summary="Ask the user a structured question",
)
def ask_create(
    request: HttpRequest, body: AskIn, conversation_id: ConversationId
) -> Status[Mapping[str, object]]:
    """Shows an `ask_user_options` widget in the conversation."""
    conversation = chat_selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    message = ask_post(
        conversation=conversation, payload=body.payload, reference=body.reference, text=body.text
    )
    turn_id = str(metadata_of(message).get("turn_id", ""))
    return Status(201, {"message_id": message.pk, "turn_id": turn_id})


@router.post(
    "/conversations/{id:conversation_id}/answers",
    url_name="answers",
    response={200: AnswerRecorded, 201: AnswerRecorded, **errors(409)},
    openapi_extra=error_descriptions(409),
    summary="Answer an ask",
)
def answer_create(
    request: HttpRequest, body: AnswerIn, conversation_id: ConversationId
) -> Status[Mapping[str, object]]:
    """201 with the state, `missing_slots` and `confidence`; 200 when the same answer
    was already recorded; 409 `pending_interactive_form` while a form waits. With
    `version` (the id of the answer it replaces) it changes an answered ask (issue 27)."""
    conversation = chat_selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    if "version" in body.model_fields_set:
        if body.version is None:
            raise ChatError("answer_invalid", _("“version” must be a positive integer."))
        ask = selectors.ask_find(conversation=conversation, turn_id=body.turn_id, field=body.field)
        row = services.ask_answer_change(
            conversation=conversation,
            ask_message=ask,
            version=body.version,
            source=str(body.source),
            value=body.value,
            text=body.raw_text or body.text or "",
        )
        created = True
    else:
        answer = body.model_dump(exclude_unset=True, mode="json")
        row, created = services.ask_answer(conversation=conversation, answer=answer)
    conversation.refresh_from_db(fields=["state"])
    state = state_of(conversation)
    body_out = {
        "answer": answer_json(row),
        "created": created,
        "consultation_state": state.get("consultation_state", {}),
        "missing_slots": state.get("missing_slots", []),
        "confidence": state.get("confidence", {}),
    }
    return Status(201 if created else 200, body_out)


def answer_json(row: StructuredAnswer) -> dict[str, JsonValue]:
    return {
        "id": row.pk,
        "type": "structured_answer",
        "field": row.field,
        "value": row.value,
        "display_text": row.display_text,
        "raw_text": row.raw_text,
        "source": row.source,
        "confidence": row.confidence,
        "turn_id": row.turn_id,
        "message_id": row.user_message_id,
        "provenance": services.PROVENANCE.get(row.source, ""),
        "amends": row.amends_id,
    }
