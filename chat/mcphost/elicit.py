"""The one adapter between the MCP host and the elicitation card kind (issue #15 part B).

A server's `elicitation/create` (form or URL mode) during a tool call becomes a card in
the chat: `elicitation_open` shows it, `elicitation_wait` blocks (in a worker thread,
never on the event loop: the services are synchronous Django ORM) until the person
answers, declines, the limit passes or the run is cancelled, and the outcome goes back to
the server. The call's budget is paused meanwhile (`client.Budget`), so the tool-call
timeout never cuts a person off. A refused schema (`ElicitationRefused`) answers the
server with JSON-RPC -32602. If the call dies while a card is pending (the server went
away, the budget ran out), the card is abandoned. A URL-mode server's
`notifications/elicitation/complete` closes its card (`elicitation_complete`).

`backend()` finds `questionnaires.elicitations.services`; without it (a branch without
part B) `hooks()` returns no elicitation callback and the SDK does not advertise the
capability, so servers know not to ask. Tests replace `backend`.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

import anyio
import mcp_types as types
from django.db import connections

from chat.core.models import Run
from chat.mcphost.client import Budget, Hooks, elicitation_limit

logger = logging.getLogger(__name__)
T = TypeVar("T")


def backend() -> Any | None:
    """The elicitation services module (part B), or None where it is not installed."""
    try:
        from questionnaires.elicitations import services
    except ImportError:
        return None
    return services


def run_cancel_requested(run_id: int | None) -> bool:
    return run_id is not None and Run.objects.filter(pk=run_id, cancel_requested=True).exists()


def hooks(*, extra: Mapping[str, Any], server_name: str, tool_name: str, call_id: str) -> Hooks:
    """The callbacks for one tool call made by a run (`extra`: the tool context's data)."""
    services = backend()
    conversation_id = extra.get("conversation_id")
    if services is None or not isinstance(conversation_id, int):
        return Hooks()
    run_id = extra.get("run_id") if isinstance(extra.get("run_id"), int) else None

    async def elicit(
        params: types.ElicitRequestParams, budget: Budget
    ) -> types.ElicitResult | types.ErrorData:
        if isinstance(params, types.ElicitRequestURLParams):
            mode, schema, url, remote_id = "url", None, params.url, params.elicitation_id
        else:
            mode, schema, url, remote_id = "form", dict(params.requested_schema), None, None
        opening = functools.partial(
            services.elicitation_open,
            conversation_id=conversation_id,
            run_id=run_id,
            server_name=server_name,
            tool_name=tool_name,
            tool_call_id=call_id,
            mode=mode,
            message=params.message,
            requested_schema=schema,
            url=url,
            remote_id=remote_id,
        )
        with budget.paused():
            return await _ask(services, opening, run_id)

    async def complete(elicitation_id: str) -> None:
        done = functools.partial(
            services.elicitation_complete,
            conversation_id=conversation_id,
            remote_id=elicitation_id,
        )
        if not await _orm(done):
            logger.info("MCP server %s completed an unknown elicitation", server_name)

    return Hooks(elicit=elicit, elicitation_complete=complete)


async def _orm(function: Callable[[], T], *, abandon_on_cancel: bool = False) -> T:
    """Run synchronous ORM work on a worker thread and give its database connection back
    afterwards: the event loop's worker threads outlive the call, and a connection they
    kept would stay checked out of the pool for good."""

    def call() -> T:
        try:
            return function()
        finally:
            connections.close_all()

    return await anyio.to_thread.run_sync(call, abandon_on_cancel=abandon_on_cancel)


async def _ask(
    services: Any, opening: functools.partial[Any], run_id: int | None
) -> types.ElicitResult | types.ErrorData:
    try:
        elicitation = await _orm(opening)
    except services.ElicitationRefused as exc:
        return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc.message))
    # Set when the call ends before the person answered: the waiting thread stops polling.
    gone = threading.Event()

    def cancelled() -> bool:
        return gone.is_set() or run_cancel_requested(run_id)

    waiting = functools.partial(
        services.elicitation_wait,
        elicitation.pk,
        timeout=elicitation_limit(),
        cancelled=cancelled,
    )
    outcome = None
    try:
        outcome = await _orm(waiting, abandon_on_cancel=True)
    finally:
        if outcome is None:
            gone.set()
            with anyio.CancelScope(shield=True):
                abandon = functools.partial(
                    services.elicitation_abandon, elicitation.pk, "the MCP call ended"
                )
                await _orm(abandon)
    actions: dict[str, Literal["accept", "decline", "cancel"]] = {
        "accept": "accept",
        "decline": "decline",
    }
    action = actions.get(outcome.action, "cancel")
    content = outcome.content if action == "accept" else None
    return types.ElicitResult(action=action, content=content)
