"""JSON API for external agent runtimes: ask the user a structured question."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from chat.core import selectors as chat_selectors
from chat.edge.http import api_view, json_body
from questionnaires.asks.ask_requests import ask_post


@api_view(("POST",))
def api_asks(request: HttpRequest, conversation_id: int) -> JsonResponse:
    """`POST /api/v1/conversations/<id>/asks` `{"payload", "reference"?, "text"?}`
    → 201 `{"message_id", "turn_id"}`; 400 `ask_invalid` lists every problem."""
    conversation = chat_selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    body = json_body(request)
    message = ask_post(
        conversation=conversation,
        payload=body.get("payload"),
        reference=body.get("reference"),
        text=body.get("text", ""),
    )
    return JsonResponse(
        {"message_id": message.pk, "turn_id": message.metadata["turn_id"]}, status=201
    )
