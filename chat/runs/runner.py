"""Execute one run: bookkeeping around the agent's turn function.

The conversation's agent (chat.core.agents) names its turn function `(run) -> stop_reason`;
the function does the work (calls the LLM loop, the intake logic, …) and returns a
`StopReason` value. An agent that is not registered (any more) fails the run
(`agent_unknown`): it is never answered by another agent. This module owns the run's
status, timestamps, attempts and the `run_started` / `run_finished` / `error` events.

Durable turns: a run may be executed by several attempts (a worker died under it; see
heartbeat.py). A turn function must pick up from what earlier attempts persisted: the
model-calling agents resume step by step (resume.py); the instant ones (`Agent.instant`)
run in one transaction, so a dead worker leaves all of their turn or nothing of it.
"""

from __future__ import annotations

import logging
import time

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, transaction
from django.utils import timezone

from chat.agent.events import Stop
from chat.core.agents import Agent, AgentUnknown, TurnFunction, agent_of
from chat.core.dbfaults import connection_lost, connections_reset, retry_on_connection_loss
from chat.core.models import Run, RunAttempt, RunStatus, StopReason
from chat.core.services import event_emit
from chat.obs import logs, metrics, tracing
from chat.runs.errors import RunFailed
from chat.runs.heartbeat import heartbeat, run_claim, run_requeue, run_suspend
from chat.runs.resume import AttemptSuperseded, Journal, stop_json
from chat.runs.slots import runs_release_after

logger = logging.getLogger(__name__)


def run_agent(run: Run) -> tuple[Agent, TurnFunction]:
    """The agent whose turn the run is, and its turn function: the conversation's agent, if
    it is registered and has a turn of ours (else `RunFailed`, with a code and a message
    the page and the API show)."""
    try:
        agent = agent_of(run.conversation)
    except AgentUnknown as exc:
        raise RunFailed(exc.code, exc.message) from exc
    if agent.turn is None:
        raise RunFailed("agent_no_turn", f"The agent {agent.name!r} has no turn of ours to run.")
    return agent, agent.turn


def run_execute(*, run_id: int, task_id: str = "", worker: str = "") -> None:
    """Take the run (a new attempt) and execute — or resume — its turn.

    `task_id` is the queue message (or thread hand-off) being executed, `worker` names
    this process. A database connection lost around the turn (taking the run, finishing
    it) is retried on a fresh one: the same `task_id` takes the run over again, and the
    new attempt resumes the turn; one lost inside the turn hands the run to a new attempt.
    """
    tries = 4
    for n in range(1, tries + 1):
        try:
            _execute(run_id=run_id, task_id=task_id, worker=worker)
            return
        except DatabaseError as exc:
            if n == tries or not connection_lost(exc):
                raise
            logger.warning("run %s: database connection lost; taking it again: %s", run_id, exc)
            connections_reset()
            time.sleep(0.25 * n)


def _execute(*, run_id: int, task_id: str, worker: str) -> None:
    queued = Run.objects.filter(pk=run_id).values_list("status", "heartbeat_at", "created_at")
    before = queued.first()  # (metrics: how long it waited in the queue)
    attempt = run_claim(run_id=run_id, task_id=task_id, worker=worker)
    if attempt is None:
        return  # finished, or another live attempt has it (a duplicate delivery)
    run = Run.objects.select_related("conversation", "trigger_message").get(pk=run_id)
    agent = run.conversation.agent
    if attempt.number == 1:
        reason = "first"
    elif _resumed_after_wait(run, attempt):
        reason = "resumed"
    else:
        reason = "takeover"
    metrics.RUN_ATTEMPTS.labels(agent, reason).inc()
    if before is not None and before[0] == RunStatus.QUEUED:
        since = before[1] or before[2]
        waited = (attempt.started_at - since).total_seconds()
        metrics.RUN_QUEUE_WAIT_SECONDS.labels(agent).observe(max(waited, 0.0))
    ids: dict[str, str | int] = {
        "chat.run_id": run.pk,
        "chat.agent": agent,
        "chat.attempt": attempt.number,
    }
    with (
        logs.run_bound(
            run_id=run.pk,
            conversation_id=run.conversation_id,
            user_id=run.conversation.owner_id,
            request_id=run.request_id,
        ),
        tracing.span("chat.run", ids),
    ):
        started = time.perf_counter()
        outcome = _attempt(run, attempt, reason, worker)
        if outcome:
            metrics.RUN_ATTEMPT_SECONDS.labels(agent, outcome).observe(
                time.perf_counter() - started
            )


def _attempt(run: Run, attempt: RunAttempt, reason: str, worker: str) -> str:
    """Execute (or resume) the claimed run's turn; returns how the attempt ended ("" when
    it was taken over or lost its database connection)."""
    if reason == "first":
        event_emit(conversation_id=run.conversation_id, name="run_started", data={"run_id": run.pk})
    elif reason == "resumed":
        event_emit(conversation_id=run.conversation_id, name="run_resumed", data={"run_id": run.pk})
    else:
        logger.warning("run %s: attempt %s resumes the turn (%s)", run.pk, attempt.number, worker)
    stop_reason: str
    status: str
    lost = run.attempt_log.filter(outcome=RunAttempt.Outcome.LOST).count()
    if lost >= settings.AGENT_MAX_ATTEMPTS:
        stop_reason, status = _give_up(run, lost + 1)
    elif Run.objects.filter(pk=run.pk, cancel_requested=True).exists():
        stop_reason, status = StopReason.CANCELLED, RunStatus.CANCELLED
    else:
        try:
            with heartbeat(run_id=run.pk, attempt=attempt.number):
                stop_reason, status = _turn(run)
        except AttemptSuperseded:
            logger.warning("run %s: attempt %s was taken over; it stops", run.pk, attempt.number)
            return ""
        except ConnectionLost:
            _hand_over(run)
            return ""
    agent = run.conversation.agent
    if status == RunStatus.SUSPENDED:
        retry_on_connection_loss(
            lambda: run_suspend(run=run, attempt=attempt), what=f"suspending run {run.pk}"
        )
        metrics.RUN_SUSPENSIONS.labels(agent).inc()
        return str(status)
    finished = retry_on_connection_loss(
        lambda: _finish(run, attempt, stop_reason, status), what=f"finishing run {run.pk}"
    )
    runs_release_after(run_id=run.pk)  # the turns waiting behind this one may start
    if finished:
        metrics.RUNS.labels(agent, stop_reason).inc()
        metrics.RUN_SECONDS.labels(agent).observe(
            max((timezone.now() - run.created_at).total_seconds(), 0.0)
        )
    return str(status)


def _resumed_after_wait(run: Run, attempt: RunAttempt) -> bool:
    """Did the previous attempt end with the run suspended (not with a dead worker)?"""
    previous = run.attempt_log.filter(number=attempt.number - 1).values_list("outcome", flat=True)
    return previous.first() == RunAttempt.Outcome.SUSPENDED


class ConnectionLost(Exception):
    """The database connection died under the turn: nothing more can be stored by it."""


def _hand_over(run: Run) -> None:
    """The turn lost its database connection: give the run to a new attempt, which
    resumes from the last persisted step, instead of failing the person's turn. (If the
    database stays away, the heartbeat goes stale and the reaper does this later.)"""
    logger.warning("run %s: database connection lost mid-turn; a new attempt resumes", run.pk)
    try:
        retry_on_connection_loss(lambda: run_requeue(run), what=f"requeueing run {run.pk}")
    except DatabaseError:
        logger.exception("run %s: could not requeue; the reaper will", run.pk)


def _finish(run: Run, attempt: RunAttempt, stop_reason: str, status: str) -> bool:
    now = timezone.now()
    with transaction.atomic():
        finished = Run.objects.filter(
            pk=run.pk, attempts=attempt.number, status=RunStatus.RUNNING
        ).update(
            status=status, stop_reason=stop_reason, finished_at=now, error=run.error, checkpoint={}
        )
        if not finished:
            logger.warning("run %s: attempt %s was taken over", run.pk, attempt.number)
            return False
        RunAttempt.objects.filter(pk=attempt.pk).update(outcome=status, ended_at=now)
        event_emit(
            conversation_id=run.conversation_id,
            name="run_finished",
            data={"run_id": run.pk, "stop_reason": stop_reason, "status": status},
        )
    return True


def _give_up(run: Run, number: int) -> tuple[str, str]:
    """Every allowed attempt died mid-turn (a turn that kills its worker, say)."""
    tries = number - 1
    run.error = f"worker_lost: the process running this turn stopped {tries} times."
    event_emit(
        conversation_id=run.conversation_id,
        name="error",
        data={
            "run_id": run.pk,
            "code": "worker_lost",
            "message": f"The process running this turn stopped {tries} times. "
            "Retry to run it again.",
        },
    )
    return StopReason.ERROR, RunStatus.FAILED


def _turn_stop(run: Run) -> str:
    """Run (or resume) the agent's turn function; returns its stop reason."""
    stop = (run.checkpoint or {}).get("stop")
    if stop:  # the turn had ended when the previous attempt's worker died
        if stop["reason"] == StopReason.ERROR:
            raise RunFailed(stop.get("code") or "run_failed", stop.get("message") or "")
        return str(stop["reason"])
    agent, turn = run_agent(run)
    if not agent.instant:
        return turn(run)
    with transaction.atomic():
        stop_reason = turn(run)
        journal = Journal(run, run.attempts)
        journal.step_stored(None, stop_json(stop_reason))
    return stop_reason


def _turn(run: Run) -> tuple[str, str]:
    """Run the kind's turn function; returns (stop_reason, status).

    Raises ConnectionLost when the turn failed because its database connection died."""
    try:
        stop_reason = _turn_stop(run)
    except AttemptSuperseded:
        raise
    except Exception as exc:
        if connection_lost(exc):
            raise ConnectionLost() from exc
        if isinstance(exc, RunFailed):
            logger.warning("run %s failed: %s %s", run.pk, exc.code, exc.message)
            code, message = exc.code, exc.message
        elif isinstance(exc, SoftTimeLimitExceeded):
            logger.warning("run %s hit the soft time limit", run.pk)
            code = "turn_time_limit"
            message = (
                f"The turn took longer than {settings.AGENT_TURN_SOFT_TIME_LIMIT} seconds "
                "and was stopped."
            )
        else:
            logger.exception("run %s failed", run.pk)
            code, message = "run_failed", f"{type(exc).__name__}: {exc}"
    else:
        if stop_reason == StopReason.CANCELLED:
            return stop_reason, RunStatus.CANCELLED
        if stop_reason == Stop.SUSPENDED:
            return stop_reason, RunStatus.SUSPENDED
        return stop_reason, RunStatus.FINISHED
    run.error = message
    event_emit(
        conversation_id=run.conversation_id,
        name="error",
        data={"run_id": run.pk, "code": code, "message": message},
    )
    return StopReason.ERROR, RunStatus.FAILED
