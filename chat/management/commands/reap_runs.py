from __future__ import annotations

from django.core.management.base import BaseCommand

from chat.runs.heartbeat import run_reap_stale


class Command(BaseCommand):
    help = "Mark runs whose worker died as failed (for cron when not using `manage.py serve`)."

    def handle(self, *args, **options) -> None:
        reaped = run_reap_stale()
        self.stdout.write(f"{len(reaped)} stale run(s) failed: {reaped}")
