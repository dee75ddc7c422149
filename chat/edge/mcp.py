"""The MCP endpoint (`/mcp/`, streamable HTTP, official `mcp` SDK) for external runtimes.

Tools: `interactive_form_question` (spec 003: raises a deferred form into the run's
conversation) and `questionnaire_async` (spec 000: a questionnaire card). Every request
needs `Authorization: Bearer <MCP_RUN_TOKEN>` (`chat.core.identity`), which binds the
calls to one conversation and run; a missing, tampered or expired token gets 401 before
the SDK sees the request. Stateless mode with JSON responses: any worker process can
serve any request, nothing is kept between requests.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from channels.db import database_sync_to_async
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from chat.core.errors import ChatError
from chat.core.http import bearer_from_header
from chat.core.identity import RunIdentity, mcp_token_verify
from chat.core.models import Role, Run
from chat.core.services import message_create
from questionnaires.asks.ask_requests import ask_post
from questionnaires.forms.services import TOOL_NAME, form_open
from questionnaires.protocol import questionnaire_async
from questionnaires.tool_calls import assistant_message_create

PATH = "/mcp/"

server = MCPServer(
    name="inline-questionnaire-chat",
    instructions=(
        "Raise structured questions in the chat conversation bound to your run token. "
        "interactive_form_question shows a form and defers: end your run and wait for the "
        "user's answer, which arrives as the tool result in the conversation."
    ),
)


def _identity(headers: Any) -> RunIdentity:
    raw = bearer_from_header(str(headers.get("authorization", ""))) if headers else None
    identity = mcp_token_verify(raw or "")
    if identity is None:  # the ASGI guard already refused it; never trust a bypass
        raise PermissionError("invalid run token")
    return identity


def _tool_call(name: str, arguments: Any) -> dict[str, Any]:
    return {
        "id": f"mcp_{secrets.token_hex(8)}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def _run(identity: RunIdentity) -> Any:

    return Run.objects.select_related("conversation").get(
        pk=identity.run_id,
        conversation_id=identity.conversation_id,
        conversation__owner_id=identity.user_id,
    )


def open_form(identity: RunIdentity, arguments: dict[str, Any]) -> dict[str, Any]:
    """Open the form; on success the tool block (an assistant message carrying the call)
    is stored, and the payload attaches to it (`questionnaires.forms.services`)."""

    run = _run(identity)
    call = _tool_call(TOOL_NAME, arguments)
    result = form_open(
        conversation_id=run.conversation_id,
        run_id=run.pk,
        message_id=None,
        tool_use_id=call["id"],
        arguments=arguments,
        lang=run.conversation.language,
    )
    if result.get("success") is True:
        assistant_message_create(
            conversation=run.conversation,
            content="",
            tool_calls=[call],
            metadata={"kind": "mcp"},
            run=run,
        )
    return result


def start_questionnaire(identity: RunIdentity, arguments: dict[str, Any]) -> dict[str, Any]:
    """Validate the questionnaire and post it as a card (tool call + its result)."""
    from django.db import transaction

    run = _run(identity)
    result = questionnaire_async(arguments, lang=run.conversation.language)
    call = _tool_call("questionnaire_async", arguments)
    with transaction.atomic():
        message_create(
            conversation=run.conversation,
            role=Role.ASSISTANT,
            tool_calls=[call],
            metadata={"kind": "mcp"},
            run=run,
        )
        message_create(
            conversation=run.conversation,
            role=Role.TOOL,
            content=json.dumps(result, ensure_ascii=False),
            tool_call_id=call["id"],
            metadata={"name": "questionnaire_async"},
            run=run,
        )
    return result


@server.tool(
    name="interactive_form_question",
    description=(
        "Show the user a form and defer. `questions`: list of {id, question, input_type "
        "(choice|text), options (strings or {label, value}), multi_select, required, "
        "default, placeholder}. Invalid input returns every problem (path + message). "
        "One form per run."
    ),
)
async def interactive_form_question(ctx: Context, questions: Any = None) -> dict[str, Any]:
    identity = _identity(ctx.headers)
    result: dict[str, Any] = await database_sync_to_async(open_form)(
        identity, {"questions": questions}
    )
    return result


@server.tool(
    name="questionnaire_async",
    description=(
        "Ask a questionnaire (spec 000): `title` and `questions` (type single_choice | "
        "multi_choice | free_text, text, options, default, allow_other). Returns at once; "
        "the answer arrives as the next user message."
    ),
)
async def questionnaire_async_tool(
    ctx: Context, questions: Any = None, title: str | None = None
) -> dict[str, Any]:
    identity = _identity(ctx.headers)
    arguments: dict[str, Any] = {"questions": questions}
    if title is not None:
        arguments["title"] = title
    result: dict[str, Any] = await database_sync_to_async(start_questionnaire)(identity, arguments)
    return result


def ask_options(identity: RunIdentity, arguments: dict[str, Any]) -> dict[str, Any]:
    """Ask a structured question (spec 004) in the run's conversation; every problem of
    an invalid payload comes back at once, and nothing is shown."""

    run = _run(identity)
    try:
        message = ask_post(conversation=run.conversation, **arguments)
    except ChatError as error:
        return {"success": False, "status": "error", **error.as_dict()}
    return {
        "success": True,
        "status": "awaiting_user_input",
        "message_id": message.pk,
        "turn_id": message.metadata["turn_id"],
    }


@server.tool(
    name="ask_user_options",
    description=(
        "Ask one structured question (spec 004): `payload` {question, field, options "
        "[{label, value, icon?}], allow_free_text, free_text_placeholder} or type scale | "
        "boolean | free_text_only; optional `reference` {title, snippet, source?, url?} and "
        "`text` (an intro). The answer arrives as the next user message "
        "(<structured_answer>)."
    ),
)
async def ask_user_options_tool(
    ctx: Context, payload: Any = None, reference: Any = None, text: str = ""
) -> dict[str, Any]:
    identity = _identity(ctx.headers)
    arguments = {"payload": payload, "reference": reference, "text": text}
    result: dict[str, Any] = await database_sync_to_async(ask_options)(identity, arguments)
    return result


# Bearer tokens (not cookies) authenticate every request, so DNS rebinding gains nothing;
# the host check would only break deployments behind other host names.
_sdk_app = server.streamable_http_app(
    streamable_http_path=PATH,
    stateless_http=True,
    json_response=True,
    transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
)


async def _unauthorized(send: Any) -> None:
    body = json.dumps(
        {
            "error": "unauthorized",
            "message": "Send a valid run token: Authorization: Bearer <MCP_RUN_TOKEN>.",
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="mcp"'),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def application(scope: Any, receive: Any, send: Any) -> None:
    """The mounted ASGI app: the bearer-token guard in front of the SDK's app."""
    if scope["type"] == "http":
        headers = dict(scope.get("headers") or [])
        token = bearer_from_header(headers.get(b"authorization", b"").decode("latin-1"))
        if mcp_token_verify(token or "") is None:
            await _unauthorized(send)
            return
    await _sdk_app(scope, receive, send)


def lifespan() -> Any:
    """The SDK's session manager must run while the server runs (ASGI lifespan)."""
    return server.session_manager.run()
