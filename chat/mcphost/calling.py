"""A run's tool call to an MCP server, from its first round to its result, across the
run's attempts. The `McpCall` row is the source of truth; no worker waits for a person.

- A 2026-07-28 server is called by the run's worker, one round at a time
  (`client.call_round`). When it answers with an `InputRequiredResult`, the server's
  request state and input requests are stored, each elicitation becomes a card whose wait
  holds the run, and the run suspends (`ToolSuspended`). Once every card is answered,
  declined, cancelled or expired, the run is queued again; its next attempt executes this
  call again and re-issues it with the answers and the request state. The budget
  (MCP_TOOL_TIMEOUT) counts only the rounds' time on the server.
- A 2025-11-25 server needs its session open while a person answers: the call is handed
  to the MCP session host (chat.mcphost.host) through the row (`hosted`), with a wait that
  holds the run. The worker waits MCP_HOST_GRACE_SECONDS for the result — a call that
  asks nobody finishes in the same attempt — and otherwise the run suspends until the
  host stores the result and closes that wait.

A call whose round was under way when its worker died has an unknown effect: the resumed
run fails visibly (`tool_effect_unknown`) rather than call the server twice.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import mcp_types as types
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from chat.agent.tools.base import ToolContext, ToolStop, ToolSuspended
from chat.core.models import MCP_CALL_WAIT, Conversation, Run, Wait, WaitStatus
from chat.core.waits import wait_open
from chat.mcphost import client, elicit, health, hosted, progress
from chat.mcphost.host import host_ensure
from chat.mcphost.models import McpServer
from chat.mcphost.records import McpCall, McpCallState, host_wait_ref
from chat.mcphost.results import call_result, error_result, url_elicitation_required
from chat.obs import metrics, tracing

logger = logging.getLogger(__name__)

MAX_ROUNDS = 10
# Errors that mean the server is down or hung (the breaker counts them).
OUTAGES = (client.MCP_UNAVAILABLE, client.MCP_TIMEOUT)
MCP_HOST_UNAVAILABLE = "MCP_HOST_UNAVAILABLE"
MCP_UNSUPPORTED_INPUT = "MCP_UNSUPPORTED_INPUT"
MCP_TOO_MANY_ROUNDS = "MCP_TOO_MANY_ROUNDS"
MCP_CIRCUIT_OPEN = "MCP_CIRCUIT_OPEN"
POLL_SECONDS = 0.1


def endpoint(server: McpServer) -> client.Endpoint:
    return client.Endpoint(name=server.name, url=server.url, headers=server.request_headers())


# A tool call's arguments and result: JSON objects (MCP's own types are loose too).
JsonObject = dict[str, Any]


def call_execute(
    server: McpServer, remote: str, arguments: JsonObject, context: ToolContext
) -> JsonObject:
    """Execute (or pick up) the call `context.call_id`; always a result for the model,
    or `ToolSuspended` while it waits for a person or the session host.

    Measured (chat.obs): the worker's time on it, by server and outcome (`ok`, `error`,
    `waiting` when the run suspends on it), and a `chat.mcp_call` span."""
    run_id = context.extra.get("run_id")
    attributes: dict[str, str | int] = {
        "chat.mcp.server": server.name,
        "chat.mcp.tool": remote,
        "chat.run_id": run_id if isinstance(run_id, int) else 0,
    }
    started = time.perf_counter()
    outcome = "error"
    with tracing.span("chat.mcp_call", attributes) as span:
        try:
            result = _call_execute(server, remote, arguments, context)
            outcome = "error" if result.get("success") is False else "ok"
            return result
        except ToolSuspended:
            outcome = "waiting"
            raise
        finally:
            span.set_attribute("chat.mcp.outcome", outcome)
            metrics.MCP_CALLS.labels(server.name, outcome).inc()
            metrics.MCP_CALL_SECONDS.labels(server.name).observe(time.perf_counter() - started)


def _call_execute(
    server: McpServer, remote: str, arguments: JsonObject, context: ToolContext
) -> JsonObject:
    run_id = context.extra.get("run_id")
    if not isinstance(run_id, int) or not context.call_id:
        return _without_run(server, remote, arguments)
    call, fresh = _record(run_id, context.call_id, server, remote, arguments)
    for _round in range(MAX_ROUNDS + 2):
        if call.state == McpCallState.DONE:
            return dict(call.result or {})
        if call.state == McpCallState.HOSTED:
            return _await_host(call)
        if call.state == McpCallState.CALLING and not fresh:
            raise ToolStop("tool_effect_unknown", _effect_unknown(call))
        if call.state == McpCallState.INPUT:
            responses = _responses(call)
            if responses is None:
                raise ToolSuspended(f"{call}: cards still open")
            _round_run(call, server, responses)
        elif _speaks_legacy(server, call.tool):
            _hand_to_host(call)
        else:
            _round_run(call, server, None)
        fresh = True
    _done(call, error_result(MCP_TOO_MANY_ROUNDS, f"{server.name} kept asking for input."))
    return dict(call.result or {})


def call_finished(context: ToolContext) -> JsonObject | None:
    """The stored result of the call `context.call_id` of this run, if it has one."""
    run_id = context.extra.get("run_id")
    if not isinstance(run_id, int):
        return None
    row = McpCall.objects.filter(
        run_id=run_id, tool_call_id=context.call_id[:200], state=McpCallState.DONE
    ).values_list("result", flat=True)
    result = row.first()
    return dict(result) if isinstance(result, dict) else None


def _without_run(server: McpServer, remote: str, arguments: JsonObject) -> JsonObject:
    """A call outside a run (nothing to suspend, no one to ask): one connection; a
    server that asks is told the chat can't."""
    try:
        result = client.tool_call(endpoint(server), remote, arguments)
    except client.McpHostError as exc:
        return error_result(exc.code, exc.message)
    return call_result(server.name, remote, result)


def _record(
    run_id: int, call_id: str, server: McpServer, remote: str, arguments: dict[str, Any]
) -> tuple[McpCall, bool]:
    run = Run.objects.only("conversation_id").get(pk=run_id)
    return McpCall.objects.get_or_create(
        run_id=run_id,
        tool_call_id=call_id[:200],
        defaults={
            "conversation_id": run.conversation_id,
            "server": server,
            "server_name": server.name,
            "tool": remote,
            "arguments": arguments,
            "state": McpCallState.CALLING,
            "budget_left": settings.MCP_TOOL_TIMEOUT,
        },
    )


def _effect_unknown(call: McpCall) -> str:
    return (
        f"The worker running this turn stopped while the tool {call.server_name}__{call.tool} "
        "was running, so whether it took effect is unknown; it is not run a second time on "
        "its own. Retry to run the turn again."
    )


def _speaks_legacy(server: McpServer, tool: str) -> bool:
    """Is this call made in 2025-11-25: the server speaks only that, or speaks both and
    this tool asks over a back-channel (remembered on the server's health row)?"""
    revision, asks_mid_call = health.known_revision(server.pk, tool)
    return asks_mid_call or (bool(revision) and not client.is_modern(revision))


def _save(call: McpCall, **fields: Any) -> None:
    for name, value in fields.items():
        setattr(call, name, value)
    McpCall.objects.filter(pk=call.pk).update(updated_at=timezone.now(), **fields)


def _done(call: McpCall, result: dict[str, Any]) -> None:
    """The call has its result: an opened link of it whose server never said "done" is
    resolved with it."""
    with transaction.atomic():
        _save(call, state=McpCallState.DONE, result=result)
        services = elicit.backend()
        if services is not None and call.input_requests:
            services.elicitations_resolve_links(
                run_id=call.run_id,
                tool_call_id=call.tool_call_id,
                success=result.get("success") is True,
            )


# --- 2026-07-28: rounds made by the worker -----------------------------------------------


def _round_run(call: McpCall, server: McpServer, responses: types.InputResponses | None) -> None:
    """Make one round; leaves the call done, waiting for input (cards open) or hosted."""
    _save(call, state=McpCallState.CALLING)  # committed before the server hears of it
    try:
        answer = client.call_round(
            endpoint(server),
            call.tool,
            call.arguments,
            seconds=call.budget_left,
            responses=responses,
            request_state=call.request_state or None,
            progress=progress.reporter(
                conversation_id=call.conversation_id, tool_call_id=call.tool_call_id
            ),
        )
    except client.McpHostError as exc:
        _round_failed(call, server, exc)
        return
    health.record_success(server.pk, answer.revision)
    if answer.result is None and answer.input is None:  # it speaks 2025-11-25
        _hand_to_host(call)
        return
    budget = max(call.budget_left - answer.seconds, 0.0)
    if answer.input is not None:
        _input_required(call, answer.input, budget, answer.revision)
    elif answer.result is not None:
        _save(call, budget_left=budget, revision=answer.revision)
        _done(call, call_result(server.name, call.tool, answer.result))


def _round_failed(call: McpCall, server: McpServer, exc: client.McpHostError) -> None:
    if client.needs_back_channel(exc):
        # The tool asks the pre-2026 way (a request mid-call): call it in 2025-11-25,
        # now and from now on (the server's health row remembers the tool).
        logger.info(
            "MCP server %s: tool %s asks over a back-channel; its calls use 2025-11-25",
            server.name,
            call.tool,
        )
        health.mark_needs_back_channel(server.pk, call.tool)
        _hand_to_host(call)
        return
    if exc.code in OUTAGES:
        health.record_failure(server.pk, exc.code, exc.message)
    if exc.code == client.MCP_URL_ELICITATION_REQUIRED:
        result = url_elicitation_required(
            call.server_name,
            call.tool,
            exc,
            conversation_id=call.conversation_id,
            run_id=call.run_id,
            call_id=call.tool_call_id,
        )
    else:
        result = error_result(exc.code, exc.message)
    _done(call, result)


def _input_required(
    call: McpCall, needed: types.InputRequiredResult, budget: float, revision: str
) -> None:
    """Store the server's request state and open a card per elicitation (roots are
    answered at once: none; sampling is not offered)."""
    requests: dict[str, Any] = {}
    for key, request in (needed.input_requests or {}).items():
        if isinstance(request, types.ListRootsRequest):
            requests[key] = {"response": types.ListRootsResult(roots=[]).model_dump(mode="json")}
        elif isinstance(request, types.ElicitRequest):
            requests[key] = {"card": _card(call, key, request.params)}
        else:
            message = _("“%(server)s” asked this chat to use a model for it, which it doesn't.")
            _done(call, error_result(MCP_UNSUPPORTED_INPUT, message % {"server": call.server_name}))
            return
    _save(
        call,
        state=McpCallState.INPUT,
        request_state=needed.request_state or "",
        input_requests=requests,
        rounds=call.rounds + 1,
        budget_left=budget,
        revision=revision,
    )


def _card(call: McpCall, key: str, params: Any) -> int | dict[str, str]:
    """Open the card for one input request: its id, or why it was refused (a link that
    can't be opened safely, a secret field, an unsupported schema, a limit: the card
    says why; the server hears it — `refused_response`)."""
    services = elicit.backend()
    if services is None:
        return {"code": "elicitation_unsupported", "message": "This chat can't show questions."}
    try:
        row = services.elicitation_open(
            **elicit.open_arguments(
                params,
                conversation_id=call.conversation_id,
                run_id=call.run_id,
                server_name=call.server_name,
                tool_name=call.tool,
                call_id=call.tool_call_id,
            ),
            input_key=key,
            resumes_run=True,
        )
    except services.ElicitationRefused as refused:
        return {"code": refused.code, "message": str(refused.message)}
    return int(row.pk)


# Where a refused input request's response says why (its `_meta`).
REFUSED_META_KEY = "io.questionnaires/refused"


def refused_response(refusal: object) -> types.ElicitResult:
    """What a 2026 server hears for an input request the chat refused to show: `cancel`
    (the person did nothing — never `decline`, which is the person's own no), with the
    refusal's code and reason in `_meta` (the card shows the same reason)."""
    why = refusal if isinstance(refusal, dict) else {}
    meta = {
        REFUSED_META_KEY: {
            "code": str(why.get("code") or "elicitation_refused"),
            "message": str(why.get("message") or "The chat refused to show this request."),
        }
    }
    return types.ElicitResult(action="cancel", _meta=meta)


def _responses(call: McpCall) -> types.InputResponses | None:
    """The answers to the stored input requests, or None while a card is still open."""
    services = elicit.backend()
    cards = [v["card"] for v in call.input_requests.values() if isinstance(v.get("card"), int)]
    settled = services.elicitations_settled(cards) if services and cards else {}
    responses: dict[str, Any] = {}
    for key, entry in call.input_requests.items():
        if "response" in entry:
            responses[key] = types.ListRootsResult.model_validate(entry["response"])
            continue
        card = entry.get("card")
        if not isinstance(card, int):  # refused: the person was never asked
            responses[key] = refused_response(card)
            continue
        outcome = settled.get(card)
        if outcome is None:
            return None
        answer = {"action": outcome.action, "content": outcome.content, "_meta": outcome.meta}
        responses[key] = types.ElicitResult.model_validate(answer)
    return responses


# --- 2025-11-25: the session host makes the call -----------------------------------------


def _hand_to_host(call: McpCall) -> None:
    """Hand the call to the MCP session host: the row says so, and a wait holds the run
    until the host stores the result (or is interrupted)."""
    host_ensure()  # the thread host of `make run` and tests
    if not hosted.host_alive():
        message = _("The chat's MCP session host is not running, so %(server)s can't be called.")
        _done(call, error_result(MCP_HOST_UNAVAILABLE, message % {"server": call.server_name}))
        return
    conversation = Conversation.objects.get(pk=call.conversation_id)
    with transaction.atomic():
        _save(
            call, state=McpCallState.HOSTED, host="", taken_at=None, revision=client.LEGACY_REVISION
        )
        wait_open(
            conversation=conversation,
            kind=MCP_CALL_WAIT,
            ref=host_wait_ref(call.pk),
            # a backstop only: the host ends every call it holds well before
            seconds=settings.MCP_TOOL_TIMEOUT
            + settings.MCP_ELICITATION_TIMEOUT * settings.WAITS_PER_TOOL_CALL
            + 300,
            run=Run.objects.get(pk=call.run_id),
            tool_call_id=call.tool_call_id,
            resumes_run=True,
        )


def _await_host(call: McpCall) -> dict[str, Any]:
    """The host's result within the grace period, else the run suspends — at once when
    the server has asked the person (that answer takes a person's time)."""
    deadline = time.monotonic() + settings.MCP_HOST_GRACE_SECONDS
    asking = Wait.objects.filter(  # a card the server asked the person with, in this call
        run_id=call.run_id, tool_call_id=call.tool_call_id, status=WaitStatus.OPEN
    ).exclude(kind=MCP_CALL_WAIT)
    while True:
        row = McpCall.objects.filter(pk=call.pk).values_list("state", "result").get()
        if row[0] == McpCallState.DONE:
            return dict(row[1] or {})
        if time.monotonic() >= deadline or asking.exists():
            raise ToolSuspended(f"{call}: in the session host")
        time.sleep(POLL_SECONDS)
