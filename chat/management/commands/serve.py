"""`manage.py serve`: the production shape on one machine.

Several uvicorn worker processes behind one port (uvicorn's supervisor restarts a web
worker that dies) and, with AGENT_RUNNER=celery, Celery worker(s) for agent runs (the
Celery master restarts a pool process that dies; its run is redelivered and resumes)
plus one Celery beat for the periodic work (resume or fail runs whose worker died, prune
old stream events, clear expired sessions). The supervisor itself also reaps lost runs
every AGENT_REAP_INTERVAL, straight from the database (beat's task queues behind runs).

It is a small supervisor: a process that exits is started again at once (a Celery worker
can die when Redis restarts under it; its runs are resumed by the reaper, see
chat/runs/heartbeat.py), so one crash costs seconds, not every open stream. A process
that keeps dying (SERVE_MAX_RESTARTS exits within a minute) stops all of them and `serve`
exits non-zero, so systemd, Docker or Kubernetes restart the whole set (a half-running
set — web without workers — would queue runs nobody executes). Ctrl+C / SIGTERM stops
everything: Celery finishes its running turns for up to --grace seconds, then they are
killed and resume when the workers come back.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections import deque
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from prometheus_client import start_http_server

from chat.core.dbfaults import connections_reset, retry_on_connection_loss
from chat.edge.metrics import scrape_registry
from chat.mcphost.host import host_mode
from chat.obs import metrics
from chat.runs.heartbeat import run_reap_stale
from chat.runs.waits import waits_expire

# serve's own lines (start, restarts, reaping) go through logging like every other line:
# with LOG_FORMAT=json they are JSON too.
say = logging.getLogger("chat.serve")


def metrics_bind(value: str) -> tuple[str, int]:
    """METRICS_BIND: `host:port`, `[v6]:port` or a port alone (loopback)."""
    host, _sep, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise CommandError(f"METRICS_BIND must be host:port, not {value!r}", returncode=2)
    return host, int(port)


def proxy_arguments(trusted: list[str]) -> list[str]:
    """uvicorn believes X-Forwarded-For / -Proto from `TRUSTED_PROXIES` only: by default
    it would from 127.0.0.1, letting any local client pick its own address."""
    if not trusted:
        return ["--no-proxy-headers"]
    return ["--proxy-headers", "--forwarded-allow-ips", ",".join(trusted)]


def _root_warning_as_json() -> None:
    """Celery warns about running as root in plain text before any logging is set up,
    which broke an all-JSON log: said here once, as a JSON line, and not by the workers."""
    say.warning(
        "Celery workers run with superuser privileges (uid 0): run the service as an "
        "unprivileged user in production."
    )
    ignored = "ignore:You're running the worker with superuser privileges"  # literal prefix
    filters = [os.environ.get("PYTHONWARNINGS", ""), ignored]
    os.environ["PYTHONWARNINGS"] = ",".join(f for f in filters if f)


class Command(BaseCommand):
    help = "Run the web workers and (AGENT_RUNNER=celery) the Celery workers + beat."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2"))
        )
        parser.add_argument(
            "--run-workers",
            type=int,
            default=int(os.environ.get("RUN_WORKERS", "1")),
            help="Celery worker processes (each runs AGENT_WORKER_CONCURRENCY turns at once)",
        )
        parser.add_argument(
            "--grace",
            type=float,
            default=float(os.environ.get("SERVE_GRACE_SECONDS", "10")),
            help="seconds running turns get to finish on shutdown before they are killed",
        )

    def handle(self, *args: str, **options: Any) -> None:
        workers = options["workers"]
        if workers > 1 and not settings.REDIS_URL:
            raise CommandError(
                "Several workers need a shared channel layer: set REDIS_URL (or use --workers 1).",
                returncode=2,
            )
        self._metrics_start()
        commands = {"web": self._web(options["host"], options["port"], workers)}
        run_workers = options["run_workers"] if settings.AGENT_RUNNER == "celery" else 0
        for n in range(run_workers):
            commands[f"celery-worker-{n}"] = self._celery_worker(n)
        if run_workers:
            commands["celery-beat"] = self._celery("beat")
        if host_mode() == "process":  # the MCP session host (chat/mcphost/host.py)
            commands["mcp-session-host"] = [
                sys.executable, str(settings.BASE_DIR / "manage.py"), "mcp_session_host",
            ]  # fmt: skip
        if run_workers and settings.LOG_FORMAT == "json" and os.geteuid() == 0:
            _root_warning_as_json()
        procs = {name: subprocess.Popen(argv) for name, argv in commands.items()}
        say.info(
            "Serving http://%s:%s/ with %s web worker(s) and %s Celery worker(s) x %s "
            "(AGENT_RUNNER=%s).",
            options["host"], options["port"], workers, run_workers,
            settings.AGENT_WORKER_CONCURRENCY, settings.AGENT_RUNNER,
        )  # fmt: skip
        stopping = False

        def stop(*_args: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        exits: dict[str, deque[float]] = {name: deque() for name in commands}
        try:
            next_reap = 0.0
            while not stopping:
                time.sleep(0.5)
                if time.monotonic() >= next_reap:
                    next_reap = time.monotonic() + settings.AGENT_REAP_INTERVAL
                    self._reap()
                for name, proc in list(procs.items()):
                    if proc.poll() is not None:
                        procs[name] = self._restart(name, proc, commands[name], exits[name])
        finally:
            self._stop(procs, options["grace"])

    def _metrics_start(self) -> None:
        """Metrics of this start only: the multiprocess directory (PROMETHEUS_MULTIPROC_DIR,
        which `make serve` sets) is emptied of the last start's files before any worker
        writes; with METRICS_BIND they are served on a port of their own, without a
        token (bind it to an address only the scraper reaches)."""
        if metrics.multiproc_dir():
            removed = metrics.multiproc_reset(keep_pid=os.getpid())
            say.info(
                "Metrics: %s (%s files of an earlier start removed)",
                metrics.multiproc_dir(),
                removed,
            )
        elif settings.METRICS_BIND:
            raise CommandError(
                "METRICS_BIND needs PROMETHEUS_MULTIPROC_DIR (every process's metrics in one "
                "place): `make serve` sets it.",
                returncode=2,
            )
        if settings.METRICS_BIND:
            host, port = metrics_bind(settings.METRICS_BIND)
            start_http_server(port, host, registry=scrape_registry())
            say.info("Metrics on http://%s/metrics (no token)", settings.METRICS_BIND)

    def _restart(
        self,
        name: str,
        proc: subprocess.Popen[bytes],
        argv: list[str],
        exits: deque[float],
    ) -> subprocess.Popen[bytes]:
        """Start an exited process again, unless it keeps dying: then stop everything."""
        now = time.monotonic()
        exits.append(now)
        while exits and exits[0] < now - 60:
            exits.popleft()
        limit = int(os.environ.get("SERVE_MAX_RESTARTS", "5"))
        if len(exits) > limit:
            raise CommandError(
                f"{name} exited ({proc.returncode}) {len(exits)} times within a minute; "
                "stopping all"
            )
        say.warning("%s exited (%s); starting it again", name, proc.returncode)
        return subprocess.Popen(argv)

    def _web(self, host: str, port: int, workers: int) -> list[str]:
        return [
            sys.executable, "-m", "uvicorn", "chat.asgi:application",
            "--host", host, "--port", str(port),
            "--workers", str(workers), "--no-access-log", "--timeout-graceful-shutdown", "5",
            *proxy_arguments(settings.TRUSTED_PROXIES),
        ]  # fmt: skip

    def _celery(self, *args: str) -> list[str]:
        level = os.environ.get("LOG_LEVEL", "INFO")
        # The start-up banner is plain text: left out when every line must be JSON.
        quiet = ["--quiet"] if settings.LOG_FORMAT == "json" else []
        return [sys.executable, "-m", "celery", "-A", "chat", *quiet, *args, "--loglevel", level]

    def _celery_worker(self, n: int) -> list[str]:
        return self._celery(
            "worker", "--hostname", f"runs{n}@%h",
            "--concurrency", str(settings.AGENT_WORKER_CONCURRENCY),
            # No start-up sync with other nodes, no worker-to-worker gossip: runs need
            # neither (the remote control that `celery inspect` uses stays on).
            "--without-mingle", "--without-gossip",
        )  # fmt: skip

    def _stop(self, procs: dict[str, subprocess.Popen[bytes]], grace: float) -> None:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + grace
        for proc in procs.values():
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def _reap(self) -> None:
        """Resume, hand off again or fail runs whose worker or hand-off was lost. Done here
        as well as by Celery beat's task: that one waits in the runs' queue behind a
        backlog, this one looks at the database every AGENT_REAP_INTERVAL whatever the
        queue holds (the two never act twice on one run: conditional updates)."""
        try:
            reaped = retry_on_connection_loss(run_reap_stale, tries=2, what="reaping runs")
            retry_on_connection_loss(waits_expire, tries=2, what="expiring waits")
        except Exception as exc:  # the database may be restarting; try again later
            say.warning("reaping stale runs failed: %s", exc)
            connections_reset()  # a dropped connection must not fail every later reap
            return
        if reaped.failed or reaped.requeued or reaped.redispatched:
            say.warning(
                "runs whose worker or hand-off was lost: resumed %s, handed off again %s, "
                "failed %s",
                reaped.requeued,
                reaped.redispatched,
                reaped.failed,
            )
