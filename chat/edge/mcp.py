"""The MCP endpoint (`/mcp/`, streamable HTTP, official `mcp` SDK) for external runtimes.

Its tools are the agent's own tool registry (`chat.agent.tools.TOOLS`): the same names,
descriptions and JSON schemas the built-in model sees, executed by the same functions and
stored by the same service (`chat.agent.steps.step_persist`), so a tool call over MCP looks
and behaves in the chat exactly like one the built-in agent made. Every request needs
`Authorization: Bearer <MCP_RUN_TOKEN>` (`chat.core.identity`), which binds the calls to
one conversation and run; a missing, tampered or expired token gets 401 before the SDK
sees the request. Stateless mode with JSON responses: any worker process can serve any
request, nothing is kept between requests.
"""

from __future__ import annotations

import json
import logging
import secrets
from typing import Any

import mcp_types as types
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction
from django.http.request import split_domain_port, validate_host
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings

from chat.agent.events import ToolCall, ToolResult
from chat.agent.steps import step_persist
from chat.agent.tools import TOOLS, TOOLS_BY_NAME, ToolContext
from chat.agent.tools.base import is_deferred
from chat.core.identity import RunIdentity, mcp_token_verify
from chat.core.models import Run, RunStatus, StopReason
from chat.core.selectors import run_identity_live
from chat.core.text import text_problem
from chat.core.version import PRODUCT, product_version
from chat.edge.http import bad_token_strike, bearer_from_header
from chat.runs.external import run_external_end, run_external_touch

logger = logging.getLogger(__name__)

PATH = "/mcp/"
INSTRUCTIONS = (
    "Raise structured questions in the chat conversation bound to your run token. "
    "interactive_form_question shows a form and defers: end your run and wait for the "
    "user's answer, which arrives as the tool result in the conversation."
)


# MCP tool annotations (hints a client shows or gates on), true for each registry tool:
# every one adds a card to the token's conversation (not read-only), never changes or
# removes what is there (not destructive), shows another card when called again (not
# idempotent), and touches nothing outside the chat (a closed world).
_ASKS = {"read_only_hint": False, "destructive_hint": False, "idempotent_hint": False}
ANNOTATIONS: dict[str, types.ToolAnnotations] = {
    "questionnaire_async": types.ToolAnnotations(
        title="Ask a questionnaire", open_world_hint=False, **_ASKS
    ),
    "interactive_form_question": types.ToolAnnotations(
        title="Show a form and wait for the answers", open_world_hint=False, **_ASKS
    ),
    "ask_user_options": types.ToolAnnotations(
        title="Ask for one detail with options", open_world_hint=False, **_ASKS
    ),
}
RUN_NOT_ACTIVE = "run_not_active"


def _identity(ctx: Any) -> RunIdentity:
    request = getattr(ctx, "request", None)
    header = request.headers.get("authorization", "") if request is not None else ""
    identity = mcp_token_verify(bearer_from_header(header) or "")
    if identity is None:  # the ASGI guard already refused it; never trust a bypass
        raise PermissionError("invalid run token")
    return identity


def _run(identity: RunIdentity) -> Run:
    return Run.objects.select_related("conversation").get(
        pk=identity.run_id,
        conversation_id=identity.conversation_id,
        conversation__owner_id=identity.user_id,
        conversation__owner__is_active=True,
        status__in=[RunStatus.QUEUED, RunStatus.RUNNING],
    )


def tool_execute(identity: RunIdentity, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one registry tool for the token's run and store the step like the loop does.

    Arguments that can't be stored (NUL, lone surrogates, too deep, larger than an API
    message may be) are refused before anything runs or is written."""
    problem = text_problem(arguments)
    size = len(json.dumps(arguments, ensure_ascii=False)) if problem is None else 0
    if problem is not None or size > settings.CHAT_MAX_API_MESSAGE_CHARS:
        code, path = problem or ("arguments_too_large", "$")
        message = f"The arguments can't be taken ({code} at {path}); nothing was shown."
        return {"success": False, "status": "error", "error_code": code, "message": message}
    run = _run(identity)
    tool = TOOLS_BY_NAME[name]
    call = ToolCall(
        id="mcp_" + secrets.token_hex(8),
        name=name,
        arguments=json.dumps(arguments, ensure_ascii=False),
    )
    context = ToolContext(
        lang=run.conversation.language,
        extra={"run_id": run.pk, "conversation_id": run.conversation_id},
        call_id=call.id,
    )
    result = tool.execute(arguments, context)
    if is_deferred(result):
        # what a client needs to answer the form through the API (`interactive_form_answer`)
        result = {**result, "tool_use_id": call.id, "conversation_id": run.conversation_id}
    with transaction.atomic():
        step_persist(
            run=run,
            content="",
            calls=[call],
            results=[ToolResult(call, result)],
            metadata={"kind": "mcp"},
        )
        if is_deferred(result):  # spec 003: the run ends; the answer is the next message
            run_external_end(
                run_id=run.pk, status=RunStatus.FINISHED, stop_reason=StopReason.TOOL_DEFERRED
            )
    return result


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=t.name,
                title=ANNOTATIONS[t.name].title,
                description=t.description,
                input_schema=t.parameters,
                output_schema=t.output_schema,
                annotations=ANNOTATIONS[t.name],
            )
            for t in TOOLS
        ]
    )


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    identity = _identity(ctx)
    if params.name not in TOOLS_BY_NAME:
        message = f"Unknown tool {params.name!r}."
        error = {"success": False, "status": "error", "error_code": "unknown_tool"}
        return _result({**error, "message": message})
    arguments = dict(params.arguments or {})
    try:
        result = await database_sync_to_async(tool_execute)(identity, params.name, arguments)
    except Run.DoesNotExist:
        # The run ended since this request passed the token check (another call of the
        # same client deferred it, say): expected, so one line and an error result —
        # not an exception the SDK would log with its traceback.
        logger.info(
            "MCP call refused: %s (tool %s, run %s)", RUN_NOT_ACTIVE, params.name, identity.run_id
        )
        message = "This run token's run has ended; nothing was shown. Start a new run."
        result = {"success": False, "status": "error", "error_code": RUN_NOT_ACTIVE}
        result["message"] = message
    return _result(result)


def _result(result: dict[str, Any]) -> types.CallToolResult:
    """The tool's result as text and as `structuredContent` (its tool's `outputSchema`);
    a refusal (`success: false`: invalid arguments, a limit, an unknown tool) is
    `isError: true`, so a client sees it failed without reading the payload."""
    text = json.dumps(result, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=result,
        is_error=result.get("success") is False,
    )


server: Server[Any] = Server(
    PRODUCT,
    version=product_version(),
    instructions=INSTRUCTIONS,
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
)


def _transport_security() -> TransportSecuritySettings:
    """The SDK's DNS-rebinding protection with Django's ALLOWED_HOSTS. Patterns the SDK
    can't express (`*`, `.example.com`) are left to `application`'s own check, which
    applies Django's rules to every request anyway."""
    hosts = list(settings.ALLOWED_HOSTS)
    if any(h == "*" or h.startswith(".") for h in hosts):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed = [p for h in hosts for p in (h, f"{h}:*")]
    origins = [f"{scheme}://{p}" for scheme in ("http", "https") for p in allowed]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=origins
    )


_sdk_app = server.streamable_http_app(
    streamable_http_path=PATH,
    stateless_http=True,
    json_response=True,
    transport_security=_transport_security(),
)


async def _refuse(send: Any, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": code, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="mcp"'))
    if status == 429:
        headers.append((b"retry-after", b"60"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _host_allowed(headers: dict[bytes, bytes]) -> bool:
    """Django's ALLOWED_HOSTS rules for the Host (and a browser's Origin) header."""
    host = headers.get(b"host", b"").decode("latin-1")
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    origin = headers.get(b"origin", b"").decode("latin-1")
    if origin:
        netloc = origin.partition("://")[2]
        origin_domain, _port = split_domain_port(netloc)
        return bool(origin_domain) and validate_host(origin_domain, settings.ALLOWED_HOSTS)
    return True


async def application(scope: Any, receive: Any, send: Any) -> None:
    """The mounted ASGI app: the bearer-token guard in front of the SDK's app."""
    if scope["type"] == "http":
        headers = dict(scope.get("headers") or [])
        if not _host_allowed(headers):
            await _refuse(send, 400, "host_invalid", "This host name is not served here.")
            return
        token = bearer_from_header(headers.get(b"authorization", b"").decode("latin-1"))
        identity = mcp_token_verify(token or "")
        if identity is None or not await database_sync_to_async(run_identity_live)(identity):
            client = (scope.get("client") or ("", 0))[0]
            refusal = await sync_to_async(bad_token_strike)(str(client))
            message = refusal.message
            if refusal.status == 401:
                message = "Send a valid run token: Authorization: Bearer <MCP_RUN_TOKEN>."
            await _refuse(send, refusal.status, refusal.code, message)
            return
        await database_sync_to_async(run_external_touch)(run_id=identity.run_id)
    await _sdk_app(scope, receive, send)


def lifespan() -> Any:
    """The SDK's session manager must run while the server runs (ASGI lifespan)."""
    return server.session_manager.run()
