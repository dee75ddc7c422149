"""Execute one run. Placeholder until the agent runtime lands: the echo agent."""

from __future__ import annotations

from django.utils import timezone

from chat.models import Role, Run, RunStatus, StopReason
from chat.services import event_emit, message_create


def run_execute(*, run_id: int) -> None:
    run = Run.objects.select_related("conversation", "trigger_message").get(pk=run_id)
    run.status = RunStatus.RUNNING
    run.started_at = timezone.now()
    run.save(update_fields=["status", "started_at"])
    event_emit(conversation_id=run.conversation_id, name="run_started", data={"run_id": run.pk})
    text = run.trigger_message.content if run.trigger_message else ""
    message_create(
        conversation=run.conversation, role=Role.ASSISTANT, content=f"Echo: {text}", run=run
    )
    run.status = RunStatus.FINISHED
    run.stop_reason = StopReason.COMPLETED
    run.iterations = 1
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "stop_reason", "iterations", "finished_at"])
    event_emit(
        conversation_id=run.conversation_id,
        name="run_finished",
        data={"run_id": run.pk, "stop_reason": run.stop_reason},
    )
