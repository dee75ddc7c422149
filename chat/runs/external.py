"""Runs an external runtime opened (`POST …/runs`): they have no worker and no heartbeat
of their own, so they end by what the runtime does — a deferred tool result ends the run
(`tool_deferred`, spec 003: the answer is a new message and the runtime opens the next
run), an API call cancels it, and one with no activity for EXTERNAL_RUN_IDLE_MINUTES ends
(`idle`), so the page never says "working" for a runtime that went away. Every MCP call
with the run's token counts as activity (`run_external_touch`)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from chat.core.models import EXTERNAL_WORKER, Run, RunStatus, StopReason
from chat.core.services import event_emit


def run_external_end(*, run_id: int, status: str, stop_reason: str) -> bool:
    """End a running external run (its tokens die with it); False if it had ended."""
    now = timezone.now()
    with transaction.atomic():
        run = (
            Run.objects.select_for_update()
            .filter(pk=run_id, status=RunStatus.RUNNING, worker=EXTERNAL_WORKER)
            .first()
        )
        if run is None:
            return False
        Run.objects.filter(pk=run_id).update(
            status=status, stop_reason=stop_reason, finished_at=now
        )
        event_emit(
            conversation_id=run.conversation_id,
            name="run_finished",
            data={"run_id": run_id, "stop_reason": stop_reason, "status": status},
        )
    return True


def run_external_touch(*, run_id: int) -> None:
    """The runtime did something with this run: it is not idle."""
    Run.objects.filter(pk=run_id, status=RunStatus.RUNNING, worker=EXTERNAL_WORKER).update(
        heartbeat_at=timezone.now()
    )


def runs_external_idle() -> list[int]:
    """End external runs with no activity for EXTERNAL_RUN_IDLE_MINUTES (`idle`)."""
    cutoff = timezone.now() - timedelta(minutes=settings.EXTERNAL_RUN_IDLE_MINUTES)
    idle = (
        Run.objects.filter(status=RunStatus.RUNNING, worker=EXTERNAL_WORKER)
        .annotate(active_at=Coalesce("heartbeat_at", "created_at"))
        .filter(active_at__lt=cutoff)
        .values_list("pk", flat=True)
    )
    return [
        pk
        for pk in list(idle[:500])
        if run_external_end(run_id=pk, status=RunStatus.FINISHED, stop_reason=StopReason.IDLE)
    ]
