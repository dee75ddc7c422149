"""Asking for an agent turn. The core owns the `Run` row; the runs package executes it.

The row is written in the same transaction as the message that triggers it, so a
committed user message always has its run, whatever happens to the process afterwards.
Executing it (a thread, Celery, inline in tests) belongs to `chat.runs`, a layer above
this one. The core doesn't import it: it names the starter the project configures,
`settings.RUN_STARTER` (a dotted path, as Django names its email or cache backends). No
mutable global, nothing registered at start-up, and a test picks its own starter with
`override_settings`. Callers above the core (the use cases, the runs package) start runs
with `chat.runs.dispatch.run_dispatch` directly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.conf import settings
from django.utils.module_loading import import_string

from chat.core.agents import agent_of
from chat.core.models import EXTERNAL_WORKER, Conversation, Message, Run, RunStatus
from chat.core.usage import budget_problem
from chat.obs import logs, metrics

Starter = Callable[..., None]


@functools.cache
def _starter(path: str) -> Starter:
    starter: Starter = import_string(path)
    return starter


def run_start(*, run_id: int, again: bool = False) -> None:
    """Start a run the core queued (after the caller's commit), with the project's
    `RUN_STARTER(run_id=..., again=...)`; `again=True` resumes a run that waited or hands
    off once more a run whose earlier hand-off was lost."""
    _starter(settings.RUN_STARTER)(run_id=run_id, again=again)


def run_create(
    *, conversation: Conversation, trigger_message: Message | None = None, external: bool = False
) -> Run:
    """The one place run rows are written: queued for an agent of ours, or (`external`)
    running for an external runtime, which has no worker and no heartbeat of its own.

    Every new turn passes the daily token budget here, whichever way it was asked for (a
    typed message, an answer, Retry, an agent that opens by itself, the API, an external
    runtime's run): past it, `TokenBudgetExhausted` (429) and nothing is written — the
    caller's transaction rolls back what it stored for the turn. Resumed runs are not
    new turns and never come here."""
    problem = budget_problem(conversation=conversation)
    if problem is not None:
        metrics.TURNS_REFUSED.labels(problem.code).inc()
        raise problem
    request_id = str(logs.current("request_id") or "")[:64]
    if external:
        return Run.objects.create(
            conversation=conversation,
            status=RunStatus.RUNNING,
            worker=EXTERNAL_WORKER,
            request_id=request_id,
        )
    return Run.objects.create(
        conversation=conversation, trigger_message=trigger_message, request_id=request_id
    )


def run_request(*, conversation: Conversation, message: Message | None) -> Run | None:
    """Create the run a new user message triggers and start it; a conversation whose agent
    has no turn of ours has none (an external runtime reads the message over the API).
    A conversation whose agent is no longer registered is refused (409 `agent_unknown`:
    the caller's transaction drops the message), never answered by another agent."""
    if agent_of(conversation).turn is None:
        return None
    run = run_create(conversation=conversation, trigger_message=message)
    run_start(run_id=run.pk)
    return run
