from __future__ import annotations

import asyncio
import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand

from chat.mcphost.host import SessionHost


class Command(BaseCommand):
    help = (
        "Run the MCP session host: one asyncio process that makes every tool call to a "
        "2025-11-25 MCP server and keeps its session open while a person answers "
        "(`manage.py serve` starts and supervises it with AGENT_RUNNER=celery)."
    )

    def handle(self, *args: str, **options: Any) -> None:
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_a: stop.set())
        signal.signal(signal.SIGINT, lambda *_a: stop.set())
        asyncio.run(SessionHost().serve(stop))
