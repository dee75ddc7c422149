"""Execute one run: bookkeeping around the agent kind's turn function.

`AGENTS` maps a conversation's agent kind to its turn function `(run) -> stop_reason`
(`chat.runs.turn`, the intake agent). Each kind registers one line here; the function
does the work (calls the LLM loop, the intake logic, …) and returns a `StopReason` value. This module owns the run's
status, timestamps and the `run_started` / `run_finished` / `error` events.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.utils import timezone

from chat.agent.intake import intake_turn
from chat.core.models import Run, RunStatus, StopReason
from chat.core.services import event_emit
from chat.runs.heartbeat import heartbeat, run_claim
from chat.runs.turn import RunFailed, echo_turn, openai_turn, scripted_turn

logger = logging.getLogger(__name__)

TurnFunction = Callable[[Run], str]


# kind -> its turn function
AGENTS: dict[str, TurnFunction] = {
    "echo": echo_turn,
    "scripted": scripted_turn,
    "openai": openai_turn,
    "intake": intake_turn,
}


def turn_function(kind: str) -> TurnFunction:
    return AGENTS.get(kind, AGENTS["echo"])


def run_execute(*, run_id: int) -> None:
    if not run_claim(run_id=run_id):
        return  # already taken (a retried dispatch, a second worker)
    run = Run.objects.select_related("conversation", "trigger_message").get(pk=run_id)
    event_emit(conversation_id=run.conversation_id, name="run_started", data={"run_id": run.pk})
    stop_reason: str
    status: str
    if Run.objects.filter(pk=run.pk, cancel_requested=True).exists():
        stop_reason, status = StopReason.CANCELLED, RunStatus.CANCELLED
    else:
        with heartbeat(run_id=run.pk):
            stop_reason, status = _turn(run)
    run.status = status
    run.stop_reason = stop_reason
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "stop_reason", "finished_at", "error"])
    event_emit(
        conversation_id=run.conversation_id,
        name="run_finished",
        data={"run_id": run.pk, "stop_reason": stop_reason, "status": status},
    )


def _turn(run: Run) -> tuple[str, str]:
    """Run the kind's turn function; returns (stop_reason, status)."""
    try:
        stop_reason = turn_function(run.conversation.agent)(run)
    except RunFailed as exc:
        logger.warning("run %s failed: %s %s", run.pk, exc.code, exc.message)
        code, message = exc.code, exc.message
    except Exception as exc:
        logger.exception("run %s failed", run.pk)
        code, message = "run_failed", f"{type(exc).__name__}: {exc}"
    else:
        if stop_reason == StopReason.CANCELLED:
            return stop_reason, RunStatus.CANCELLED
        return stop_reason, RunStatus.FINISHED
    run.error = message
    event_emit(
        conversation_id=run.conversation_id,
        name="error",
        data={"run_id": run.pk, "code": code, "message": message},
    )
    return StopReason.ERROR, RunStatus.FAILED
