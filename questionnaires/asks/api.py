"""JSON API for external agent runtimes: ask the user a structured question, answer one."""

from __future__ import annotations

from collections.abc import Mapping

from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _

from chat.core import selectors as chat_selectors
from chat.core.errors import ChatError
from chat.core.metadata import metadata_of, state_of
from chat.core.models import Conversation
from chat.edge.http import api_view, json_body, signed_in
from questionnaires.asks import selectors, services
from questionnaires.asks.ask_requests import ask_post
from questionnaires.asks.models import StructuredAnswer
from questionnaires.protocol.jsontypes import JsonValue


@api_view(("POST",))
def asks_view(request: HttpRequest, conversation_id: int) -> JsonResponse:
    """`POST /api/v1/conversations/<id>/asks` `{"payload", "reference"?, "text"?}`
    → 201 `{"message_id", "turn_id"}`; 400 `ask_invalid` lists every problem."""
    conversation = chat_selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    body = json_body(request)
    message = ask_post(
        conversation=conversation,
        payload=body.get("payload"),
        reference=body.get("reference"),
        text=body.get("text", ""),
    )
    return JsonResponse(
        {"message_id": message.pk, "turn_id": metadata_of(message).get("turn_id", "")}, status=201
    )


@api_view(("POST",))
def answers_view(request: HttpRequest, conversation_id: int) -> JsonResponse:
    """`POST /api/v1/conversations/<id>/answers` with a spec-004 `structured_answer`; with
    `"version": <the id of the answer it replaces>` it changes an answered ask (issue 27)."""
    conversation = chat_selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    body = json_body(request)
    if "version" in body:
        row, created = _change(conversation, body), True
    else:
        row, created = services.ask_answer(conversation=conversation, answer=body)
    conversation.refresh_from_db(fields=["state"])
    state = state_of(conversation)
    return JsonResponse(
        {
            "answer": answer_json(row),
            "created": created,
            "consultation_state": state.get("consultation_state", {}),
            "missing_slots": state.get("missing_slots", []),
            "confidence": state.get("confidence", {}),
        },
        status=201 if created else 200,
    )


def _change(conversation: Conversation, body: Mapping[str, object]) -> StructuredAnswer:
    version, field, turn_id = body.get("version"), body.get("field"), body.get("turn_id", "")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ChatError("answer_invalid", _("“version” must be a positive integer."))
    if not isinstance(field, str) or not isinstance(turn_id, str):
        raise ChatError("answer_field_required", _("“field” and “turn_id” must be strings."))
    text = body.get("raw_text", "")
    if not isinstance(text, str):
        raise ChatError("answer_text_invalid", _("“raw_text” must be a string."))
    ask = selectors.ask_find(conversation=conversation, turn_id=turn_id, field=field)
    return services.ask_answer_change(
        conversation=conversation,
        ask_message=ask,
        version=version,
        source=str(body.get("source", StructuredAnswer.Source.OPTION_CLICK)),
        value=body.get("value"),
        text=text,
    )


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
