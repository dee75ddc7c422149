"""Asking for an agent turn. The core owns the `Run` row; the runs package executes it.

The row is written in the same transaction as the message that triggers it, so a
committed user message always has its run, whatever happens to the process afterwards.
Executing it (a thread, Celery, inline in tests) belongs to `chat.runs`, a layer above
this one: it registers itself as the executor when the project starts
(`chat.apps.ChatConfig.ready`). That one registration is the dependency inversion that
keeps "write, then start a run" free of import circles.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured

from chat.core.models import EXTERNAL_WORKER, AgentKind, Conversation, Message, Run, RunStatus
from chat.obs import logs

Executor = Callable[..., None]
_executor: Executor | None = None


def run_executor_set(executor: Executor) -> None:
    """Register `executor(run_id=..., inline=..., again=...)`, which starts a committed
    run (`again`: hand off once more a run that was handed off before)."""
    global _executor
    _executor = executor


def run_start(*, run_id: int, inline: bool = False, again: bool = False) -> None:
    """Execute a run per `AGENT_RUNNER` (after commit); `inline=True` runs it now;
    `again=True` hands off a run whose earlier hand-off or attempt was lost."""
    if _executor is None:
        raise ImproperlyConfigured("No run executor registered (is the chat app installed?)")
    _executor(run_id=run_id, inline=inline, again=again)


def run_create(
    *, conversation: Conversation, trigger_message: Message | None = None, external: bool = False
) -> Run:
    """The one place run rows are written: queued for an agent of ours, or (`external`)
    running for an external runtime, which has no worker and no heartbeat of its own."""
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
    """Create the run a new user message triggers and start it; external conversations
    have none (their runtime reads the message over the API)."""
    if conversation.agent == AgentKind.EXTERNAL:
        return None
    run = run_create(conversation=conversation, trigger_message=message)
    run_start(run_id=run.pk)
    return run
