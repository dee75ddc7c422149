"""JSON API for external agent runtimes (`/api/v1/`, DESIGN §6). Thin adapters."""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.urls import reverse
from django.utils.translation import gettext as _

from chat import usecases
from chat.core import selectors, services
from chat.core.errors import ChatError, NotFound
from chat.core.models import Conversation, Message, Role
from chat.edge.http import (
    api_view,
    bad_token_check,
    bad_token_record,
    bearer_token,
    error_response,
    json_body,
    signed_in,
)
from chat.edge.sse import StreamOverloaded, StreamRefused, parse_last_event_id, stream_open
from chat.edge.stream_selectors import stream_access_for_token
from questionnaires.protocol import parse_message
from questionnaires.tool_calls import assistant_message_create


@api_view(("POST",))
def conversations(request: HttpRequest) -> JsonResponse:
    body = json_body(request)
    title = body.get("title", "")
    agent = body.get("agent", "external")
    if not isinstance(title, str) or not isinstance(agent, str):
        raise ChatError("invalid_field", _("“title” and “agent” must be strings."))
    conversation = services.conversation_create(
        owner=signed_in(request), title=title, agent=agent, language=request.LANGUAGE_CODE
    )
    url = request.build_absolute_uri(reverse("chat:conversation", args=[conversation.pk]))
    return JsonResponse({"id": conversation.pk, "url": url}, status=201)


@api_view(("GET", "POST"))
def messages(request: HttpRequest, conversation_id: int) -> JsonResponse:
    conversation = selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    if request.method == "GET":
        rows = selectors.message_list_all(conversation=conversation)
        return JsonResponse({"messages": [_message_json(m) for m in rows]})
    body = json_body(request)
    message = _post_message(conversation, body)
    return JsonResponse({"id": message.pk, "seq": message.seq}, status=201)


TOOL_CALL_ID_MAX = 200  # Message.tool_call_id's max_length


def _post_message(conversation: Conversation, body: dict[str, Any]) -> Message:
    role = body.get("role")
    content = body.get("content", "")
    tool_calls = body.get("tool_calls") or []
    tool_call_id = body.get("tool_call_id", "")
    readonly = body.get("readonly", False)
    if role not in Role.values:
        raise ChatError(
            "invalid_role",
            _("“role” must be one of: %(roles)s.") % {"roles": ", ".join(Role.values)},
        )
    if not isinstance(content, str):
        raise ChatError("invalid_field", _("“content” must be a string."))
    if not isinstance(tool_calls, list) or not all(isinstance(c, dict) for c in tool_calls):
        raise ChatError("invalid_field", _("“tool_calls” must be a list of objects."))
    if not isinstance(tool_call_id, str) or not isinstance(readonly, bool):
        raise ChatError(
            "invalid_field", _("“tool_call_id” must be a string and “readonly” a boolean.")
        )
    if len(tool_call_id) > TOOL_CALL_ID_MAX:
        raise ChatError("invalid_field", _("“tool_call_id” is too long (200 characters at most)."))
    if role == Role.USER:
        # `interactive_form_answer`: the answer payload of a pending form (spec 003).
        return usecases.message_post_user(
            conversation=conversation,
            content=content,
            form_answer=body.get("interactive_form_answer"),
        )
    services.message_check_size(content, limit=settings.CHAT_MAX_API_MESSAGE_CHARS)
    if role == Role.ASSISTANT and tool_calls:
        return assistant_message_create(
            conversation=conversation,
            content=content,
            tool_calls=tool_calls,
            readonly=readonly,
        )
    return services.message_create(
        conversation=conversation,
        role=role,
        content=content,
        tool_calls=tool_calls,
        tool_call_id=tool_call_id,
        readonly=readonly,
    )


def _message_json(message: Message) -> dict[str, Any]:
    return {
        "id": message.pk,
        "seq": message.seq,
        "role": message.role,
        "content": message.content,
        "display_content": message.display_content,
        "tool_calls": message.tool_calls,
        "tool_call_id": message.tool_call_id,
        "readonly": message.readonly,
        "hidden": message.hidden,
        "segments": _segments(message),
    }


def _segments(message: Message) -> list[dict[str, Any]]:
    """The message's segments in the lint JSON shape (DESIGN §6)."""
    if message.role not in (Role.ASSISTANT, Role.USER) or not message.content:
        return []
    segments = parse_message(message.content, message_id=message.pk, role=message.role)
    return [segment.to_dict() for segment in segments]


async def events(request: HttpRequest, conversation_id: int) -> HttpResponseBase:
    """The conversation's SSE stream for API clients (bearer token)."""
    if request.method != "GET":
        return HttpResponse(status=405)
    try:
        bad_token_check(request)
    except ChatError as error:
        return error_response(error)
    last = parse_last_event_id(
        request.headers.get("Last-Event-ID") or request.GET.get("last_event_id")
    )
    access = functools.partial(
        stream_access_for_token, raw=bearer_token(request), conversation_id=conversation_id
    )
    try:
        return await stream_open(
            conversation_id=conversation_id, last_event_id=last, authorize=access
        )
    except StreamRefused as refused:
        if refused.code == "not_found":
            return error_response(NotFound())
        bad_token_record(request)
        return error_response(
            ChatError(
                "unauthorized",
                _("Send a valid API token: Authorization: Bearer <token>."),
                status=401,
            )
        )
    except StreamOverloaded as error:
        response = error_response(error)
        response["Retry-After"] = str(error.retry_after)
        return response
