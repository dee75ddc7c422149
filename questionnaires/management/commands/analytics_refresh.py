"""`manage.py analytics_refresh [--rebuild]`: bring the questionnaire analytics up to date
(Celery beat does it every ANALYTICS_REFRESH_SECONDS; this is for cron and for repairs)."""

from __future__ import annotations

import time
from argparse import ArgumentParser

from django.core.management.base import BaseCommand

from questionnaires.analytics.refresh import BATCH, analytics_rebuild, analytics_refresh


class Command(BaseCommand):
    help = "Record new questionnaire cards and settle open ones (questionnaire analytics)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--rebuild",
            action="store_true",
            help="forget every recorded card and rollup, and read everything again",
        )
        parser.add_argument("--batch", type=int, default=BATCH, help="rows per transaction")

    def handle(self, *args: object, **options: object) -> None:
        started = time.monotonic()
        if options["rebuild"]:
            result = analytics_rebuild()
        else:
            batch = options["batch"]
            result = analytics_refresh(limit=max(1, batch if isinstance(batch, int) else BATCH))
        self.stdout.write(
            f"{result.created} new cards, {result.settled} settled "
            f"in {time.monotonic() - started:.2f} s"
        )
