from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from chat.runs.heartbeat import run_reap_stale
from chat.runs.waits import waits_expire


class Command(BaseCommand):
    help = (
        "Resume (AGENT_RUNNER=celery) or fail runs whose worker died, hand off again runs "
        "whose hand-off was lost, and fail runs nobody took (for cron when Celery beat "
        "doesn't run it)."
    )

    def handle(self, *args: str, **options: Any) -> None:
        reaped = run_reap_stale()
        expired = waits_expire()
        self.stdout.write(
            f"{len(reaped.requeued)} run(s) queued again: {reaped.requeued}; "
            f"{len(reaped.redispatched)} handed off again: {reaped.redispatched}; "
            f"{len(reaped.failed)} failed: {reaped.failed}; {expired} overdue wait(s) ended"
        )
        if reaped.released:  # held runs whose release was lost (chat.runs.slots)
            self.stdout.write(f"{len(reaped.released)} released: {reaped.released}")
