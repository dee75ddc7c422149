"""`manage.py metrics_serve HOST:PORT`: this machine's metrics on a port of their own.

For a machine whose processes answer no HTTP (Celery workers only): it serves what every
process sharing `PROMETHEUS_MULTIPROC_DIR` recorded, plus the open waits, without a
token — bind it to an address only the scraper reaches. (`manage.py serve` does the same
in-process with METRICS_BIND.)
"""

from __future__ import annotations

import threading

from django.core.management.base import BaseCommand, CommandError, CommandParser
from prometheus_client import start_http_server

from chat.edge.metrics import scrape_registry
from chat.management.commands.serve import metrics_bind
from chat.obs import metrics


class Command(BaseCommand):
    help = "Serve this machine's metrics (PROMETHEUS_MULTIPROC_DIR) on HOST:PORT, no token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("bind", help="host:port (e.g. 10.0.0.5:9464)")

    def handle(self, *args: str, **options: object) -> None:
        if not metrics.multiproc_dir():
            raise CommandError(
                "Set PROMETHEUS_MULTIPROC_DIR to the directory this machine's workers write.",
                returncode=2,
            )
        bind = str(options["bind"])
        host, port = metrics_bind(bind)
        start_http_server(port, host, registry=scrape_registry())
        self.stdout.write(f"Metrics on http://{bind}/metrics (no token)")
        threading.Event().wait()
