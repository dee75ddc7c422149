"""JSON API for external agent runtimes (`/api/v1/`, DESIGN §6). Thin adapters: the
request and response schemas say what is accepted and returned (OpenAPI at
`/api/v1/openapi.json`); the services decide the rest."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Annotated, ClassVar, Literal

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.urls import reverse
from ninja import Field, Router, Schema
from ninja.params import functions as param
from ninja.responses import Status
from pydantic import ConfigDict, field_validator

from chat import usecases
from chat.core import selectors, services
from chat.core.errors import ChatError, NotFound
from chat.core.models import Conversation, Message, Role
from chat.edge.apibase import (
    ApiJson,
    ApiTokenAuth,
    ConversationId,
    RequestSchema,
    error_descriptions,
    errors,
)
from chat.edge.http import bad_token_strike, bearer_token, client_address, error_response
from chat.edge.http import signed_in as signed_in
from chat.edge.sse import StreamBusy, StreamRefused, last_event_id, stream_open
from chat.edge.stream_selectors import stream_access_for_token
from questionnaires.protocol import parse_message

router = Router(auth=ApiTokenAuth(), tags=["conversations"])

TOOL_CALL_ID_MAX = 200  # Message.tool_call_id's max_length


class ConversationIn(RequestSchema):
    title: str = Field("", description="Shown in the sidebar (cut to 200 characters).")
    agent: str = Field(
        "external",
        description="Who answers user messages: one of the server's agents (`CHAT_AGENTS`; "
        "another name is refused with `agent_invalid`). Built in: `external` (nobody: the "
        "runtime posts the replies), `openai`, `scripted`, `intake`, `echo`.",
    )
    field_codes: ClassVar[dict[str, str]] = {"agent": "agent_invalid"}


EMPTY_CONVERSATION = ConversationIn.model_validate(
    {}
)  # no body (or `{}`): an untitled external conversation


class ConversationCreated(Schema):
    id: int = Field(description="The conversation's id.")
    url: str = Field(description="The conversation's page.")


class MessageIn(RequestSchema):
    role: Role = Field(strict=False, description="`user`, `assistant`, `tool` or `system`.")
    content: str = Field("", description="The message's text (Markdown, fences included).")
    tool_calls: list[dict[str, ApiJson]] | None = Field(
        None,
        description="An assistant message's tool calls (OpenAI shape: `id`, `type`, "
        "`function.name`, `function.arguments`; other keys are not stored).",
    )
    tool_call_id: str = Field(
        "", max_length=TOOL_CALL_ID_MAX, description="A `tool` message answers this call."
    )
    readonly: bool = Field(False, description="Render the message's cards read-only.")
    interactive_form_answer: dict[str, ApiJson] | None = Field(
        None,
        description="With role `user`: answers the pending interactive form "
        '(`{"type": "interactive_form_question", "tool_use_id", "answers"}`).',
    )
    field_codes: ClassVar[dict[str, str]] = {"role": "invalid_role"}

    @field_validator("tool_calls")
    @classmethod
    def _known_keys_only(
        cls, calls: list[dict[str, ApiJson]] | None
    ) -> list[dict[str, ApiJson]] | None:
        return None if calls is None else [tool_call_as_stored(call) for call in calls]


def tool_call_as_stored(call: Mapping[str, ApiJson]) -> dict[str, ApiJson]:
    """A tool call with the OpenAI shape's keys only (`id`, `type`, `function` with its
    `name` and `arguments`): whatever else a client sends is not stored (issue 34)."""
    kept: dict[str, ApiJson] = {key: call[key] for key in ("id", "type") if key in call}
    if "function" in call:
        function = call["function"]
        kept["function"] = (
            {key: function[key] for key in ("name", "arguments") if key in function}
            if isinstance(function, dict)
            else function
        )
    return kept


class MessageCreated(Schema):
    id: int = Field(description="The message's id.")
    seq: int = Field(description="Its position in the conversation (1, 2, …).")


class SegmentOut(Schema):
    """A part of a message as `questionnaire_lint --json` prints it (DESIGN §6)."""

    model_config = ConfigDict(extra="allow")
    kind: Literal["markdown", "questionnaire", "response", "invalid"]
    raw: str


class MessageOut(Schema):
    id: int
    seq: int
    role: Role
    content: str
    display_content: str
    tool_calls: list[dict[str, ApiJson]]
    tool_call_id: str
    readonly: bool
    hidden: bool
    segments: list[SegmentOut]


class MessageList(Schema):
    messages: list[MessageOut]


@router.post(
    "/conversations/",
    url_name="conversations",
    response={201: ConversationCreated, **errors()},
    openapi_extra=error_descriptions(),
    summary="Create a conversation",
)
def conversation_create(
    request: HttpRequest, body: ConversationIn = EMPTY_CONVERSATION
) -> Status[Mapping[str, object]]:
    conversation = services.conversation_create(
        owner=signed_in(request),
        title=body.title,
        agent=body.agent,  # the registry's check: 400 `agent_invalid`
        language=request.LANGUAGE_CODE,
    )
    url = request.build_absolute_uri(reverse("chat:conversation", args=[conversation.pk]))
    return Status(201, {"id": conversation.pk, "url": url})


@router.get(
    "/conversations/{id:conversation_id}/messages",
    url_name="messages",
    response={200: MessageList, **errors()},
    openapi_extra=error_descriptions(),
    summary="List a conversation's messages",
)
def message_list(request: HttpRequest, conversation_id: ConversationId) -> JsonResponse:
    conversation = selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    rows = selectors.message_list_all(conversation=conversation)
    # Serialized as is, not through the schema: validating every message's segments
    # again costs ~5 ms per 200 messages (a fifth of the request) for a shape this code
    # builds; the contract tests and schemathesis check it matches `MessageList`.
    return JsonResponse({"messages": [_message_json(m) for m in rows]})


@router.post(
    "/conversations/{id:conversation_id}/messages",
    url_name="messages",
    response={201: MessageCreated, **errors(409)},
    openapi_extra=error_descriptions(409),
    summary="Post a message",
    description="A `user` message starts a run exactly as one typed in the page.",
)
def message_post(
    request: HttpRequest, body: MessageIn, conversation_id: ConversationId
) -> Status[Mapping[str, object]]:
    conversation = selectors.conversation_get_for_user(
        user=signed_in(request), conversation_id=conversation_id
    )
    message = _post_message(conversation, body)
    return Status(201, {"id": message.pk, "seq": message.seq})


def _post_message(conversation: Conversation, body: MessageIn) -> Message:
    if body.role == Role.USER:
        # `interactive_form_answer`: the answer payload of a pending form (spec 003).
        return usecases.message_post_user(
            conversation=conversation,
            content=body.content,
            form_answer=body.interactive_form_answer,
        )
    services.message_check_size(body.content, limit=settings.CHAT_MAX_API_MESSAGE_CHARS)
    tool_calls = body.tool_calls or []
    return services.message_create(
        conversation=conversation,
        role=body.role,
        content=body.content,
        tool_calls=tool_calls,
        tool_call_id=body.tool_call_id,
        readonly=body.readonly,
    )


def _message_json(message: Message) -> Mapping[str, object]:
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


def _segments(message: Message) -> list[Mapping[str, object]]:
    """The message's segments in the lint JSON shape (DESIGN §6)."""
    if message.role not in (Role.ASSISTANT, Role.USER) or not message.content:
        return []
    segments = parse_message(message.content, message_id=message.pk, role=message.role)
    return [segment.to_dict() for segment in segments]


EVENT_STREAM = {
    "responses": {
        200: {
            "description": "The conversation's event stream (`text/event-stream`, never "
            "ends): events `id:`, `event:` (a name) and one JSON `data:` line; "
            "`: keep-alive` comments; a `retry:` hint.",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **error_descriptions(503)["responses"],
    },
    "security": [{"ApiTokenAuth": []}],
}


@router.get(
    "/conversations/{id:conversation_id}/events",
    url_name="events",
    auth=None,  # checked by the stream itself (`stream_access_for_token`), as on the page
    response={200: None, **errors(503)},
    openapi_extra=EVENT_STREAM,
    summary="Stream a conversation's events (SSE)",
)
async def events(
    request: HttpRequest,
    conversation_id: ConversationId,
    last_event_id_query: Annotated[
        str | None,
        param.Query(alias="last_event_id", description="Replay the events after this id."),
    ] = None,
    last_event_id_header: Annotated[
        str | None,
        param.Header(alias="Last-Event-ID", description="As `last_event_id`, on reconnecting."),
    ] = None,
) -> HttpResponseBase:
    """The conversation's SSE stream for API clients (bearer token). The query and header
    cursors are read by `last_event_id` (one parser for every id: 400 `invalid_id`)."""
    try:
        last = last_event_id(request)
    except ChatError as error:
        return error_response(error)
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
        return error_response(bad_token_strike(client_address(request)))
    except StreamBusy as error:
        return error_response(error)  # with Retry-After
