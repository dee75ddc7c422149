from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from chat.core.services import event_prune_deltas


class Command(BaseCommand):
    help = (
        "Delete streamed text_delta and tool_progress events older than EVENT_DELTA_MAX_AGE "
        "(for cron when Celery beat doesn't run it)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than",
            type=float,
            default=settings.EVENT_DELTA_MAX_AGE,
            help="age in seconds (default: EVENT_DELTA_MAX_AGE)",
        )

    def handle(self, *args: str, **options: Any) -> None:
        deleted = event_prune_deltas(older_than=options["older_than"])
        self.stdout.write(f"{deleted} text_delta and tool_progress event(s) deleted")
