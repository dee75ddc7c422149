"""`manage.py serve`: the production shape on one machine.

Several uvicorn worker processes behind one port (uvicorn's own supervisor restarts a
worker that dies), plus, when AGENT_RUNNER=worker, channels worker processes for agent
runs, restarted by this command if they exit. Ctrl+C / SIGTERM stops everything.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from chat.runs.heartbeat import run_reap_stale


class Command(BaseCommand):
    help = "Run several ASGI workers (and agent-run workers) behind one port."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2"))
        )
        parser.add_argument(
            "--run-workers",
            type=int,
            default=int(os.environ.get("RUN_WORKERS", "1")),
            help="agent-run worker processes (only with AGENT_RUNNER=worker)",
        )

    def handle(self, *args, **options) -> None:
        workers = options["workers"]
        if workers > 1 and not settings.REDIS_URL:
            raise CommandError(
                "Several workers need a shared channel layer: set REDIS_URL (or use --workers 1).",
                returncode=2,
            )
        web = [
            sys.executable, "-m", "uvicorn", "chat.asgi:application",
            "--host", options["host"], "--port", str(options["port"]),
            "--workers", str(workers), "--no-access-log", "--timeout-graceful-shutdown", "5",
        ]  # fmt: skip
        procs = {"web": subprocess.Popen(web)}
        run_workers = options["run_workers"] if settings.AGENT_RUNNER == "worker" else 0
        runworker = [sys.executable, "manage.py", "runworker", "agent-runs"]
        for n in range(run_workers):
            procs[f"runworker-{n}"] = subprocess.Popen(runworker)
        self.stdout.write(
            f"Serving http://{options['host']}:{options['port']}/ with {workers} web "
            f"worker(s) and {run_workers} agent-run worker(s)."
        )
        stopping = False

        def stop(*_args) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        try:
            next_reap = 0.0
            while not stopping:
                time.sleep(0.5)
                if time.monotonic() >= next_reap:
                    next_reap = time.monotonic() + 10
                    self._reap()
                for name, proc in list(procs.items()):
                    if proc.poll() is None:
                        continue
                    if name == "web":
                        raise CommandError(f"the web server exited ({proc.returncode})")
                    self.stderr.write(f"{name} exited ({proc.returncode}); restarting it")
                    procs[name] = subprocess.Popen(runworker)
        finally:
            for proc in procs.values():
                proc.terminate()
            for proc in procs.values():
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()

    def _reap(self) -> None:
        """Fail runs whose worker process died (they get a visible retry)."""

        try:
            reaped = run_reap_stale()
        except Exception as exc:  # the database may be restarting; try again later
            self.stderr.write(f"reaping stale runs failed: {exc}")
            return
        if reaped:
            self.stderr.write(f"marked runs {reaped} failed: their worker stopped")
