"""A real server for benchmarks, load tests and browser tests.

Starts the app the way `manage.py serve` does (uvicorn, optionally several worker
processes, and with `run_workers` Celery workers + beat for agent runs) on a free
loopback port, with a database of its own: a fresh SQLite file, or a fresh PostgreSQL
database created next to the one `DATABASE_URL` names (dropped again on stop). Each
server uses a Celery queue of its own, so servers sharing a broker never take each
other's runs. `CeleryWorker` starts one Celery worker alone (durable-turn tests).
Loopback only.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
PASSTHROUGH_BLOCKLIST = ("DATABASE_URL", "REDIS_URL", "LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL")

# `LiveServer.shell`'s process: one JSON-encoded snippet per stdin line, one JSON reply
# ({"ok", "out": what it printed, or the traceback}) per stdout line.
_SHELL_LOOP = """
import contextlib, io, json, sys, traceback
import django
django.setup()
from django.db import connections
for line in sys.stdin:
    out = io.StringIO()
    ok = True
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(json.loads(line), "<shell>", "exec"), {"__name__": "__shell__"})
        except BaseException:
            ok = False
            traceback.print_exc(file=out)
    connections.close_all()
    sys.stdout.write(json.dumps({"ok": ok, "out": out.getvalue()}) + "\\n")
    sys.stdout.flush()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _postgres_admin(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(url, autocommit=True)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


class LiveServer:
    """`with LiveServer(tmp, ...) as server:` — `server.url`, `server.manage(...)`."""

    def __init__(
        self,
        tmp: Path,
        *,
        database_url: str | None = None,
        fresh_database: bool = True,
        redis_url: str | None = None,
        workers: int = 1,
        run_workers: int = 0,
        env: dict[str, str] | None = None,
        settings_module: str = "chat.settings",
    ) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.run_workers = run_workers
        self._pg_admin_url: str | None = None
        self._pg_name: str | None = None
        self.env = {k: v for k, v in os.environ.items() if k not in PASSTHROUGH_BLOCKLIST}
        self.env.update(
            DATABASE_URL=self._database(database_url, fresh_database),
            # The tests' live servers hash passwords fast; benchmarks measure the real thing.
            DJANGO_SETTINGS_MODULE=settings_module,
            AGENT_RUNNER="celery" if run_workers else "thread",
            CELERY_QUEUE=f"live-{os.getpid()}-{self.port}",
            CELERY_BEAT_SCHEDULE_FILENAME=str(tmp / f"beat-{self.port}"),
            DEBUG="0",
            PYTHONUNBUFFERED="1",
        )
        if redis_url:
            self.env["REDIS_URL"] = redis_url
        self.env.update(env or {})
        self.procs: list[subprocess.Popen[bytes]] = []
        self._shell: subprocess.Popen[str] | None = None
        self.log_path = tmp / f"server-{self.port}.log"

    def _database(self, database_url: str | None, fresh: bool) -> str:
        """A fresh SQLite file or PostgreSQL database, or (fresh=False) the one given,
        e.g. to run a second server on the first one's database."""
        if not fresh and database_url:
            return database_url
        if not database_url or not database_url.startswith(("postgres://", "postgresql://")):
            return f"sqlite:///{self.tmp / f'live-{self.port}.sqlite3'}"
        self._pg_admin_url = database_url
        self._pg_name = f"qc_live_{os.getpid()}_{secrets.token_hex(4)}"
        with _postgres_admin(database_url) as conn:
            conn.execute(f'CREATE DATABASE "{self._pg_name}"')
        parts = urlsplit(database_url)
        return urlunsplit(parts._replace(path=f"/{self._pg_name}"))

    # -- processes --------------------------------------------------------------------

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {args[0]} failed:\n{result.stdout}\n{result.stderr}")
        return result.stdout

    def shell(self, code: str) -> str:
        """Run Django code in the server's database; returns what it printed.

        One long-lived Python process (Django set up once) runs every snippet, each in a
        fresh namespace, closing its database connections afterwards: a `manage.py shell`
        per call cost seconds of start-up on a busy machine, dozens of times a suite."""
        if self._shell is None or self._shell.poll() is not None:
            self._shell = subprocess.Popen(
                [sys.executable, "-c", _SHELL_LOOP],
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=open(self.tmp / f"shell-{self.port}.log", "ab"),  # noqa: SIM115
                text=True,
            )
        assert self._shell.stdin and self._shell.stdout
        self._shell.stdin.write(json.dumps(code) + "\n")
        self._shell.stdin.flush()
        line = self._shell.stdout.readline()
        if not line:
            raise RuntimeError(f"the shell process exited ({self._shell.wait()})")
        reply = json.loads(line)
        if not reply["ok"]:
            raise RuntimeError(f"shell code failed:\n{reply['out']}")
        return str(reply["out"])

    def migrate(self) -> None:
        """`manage.py migrate`, in the shell process (one Django start-up fewer)."""
        self.shell(
            "from django.core.management import call_command\n"
            "call_command('migrate', interactive=False, verbosity=0)"
        )

    def json(self, code: str) -> Any:
        """Run Django code whose last printed line is one JSON value; return it."""
        return json.loads(self.shell(code).strip().splitlines()[-1])

    def start(self, *, migrate: bool = True, timeout: float = 180) -> LiveServer:
        """Migrate, then `manage.py serve` (the production launcher) on the free port."""
        if migrate:
            self.migrate()
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
        serve = [
            sys.executable, "manage.py", "serve", "--host", "127.0.0.1",
            "--port", str(self.port), "--workers", str(self.workers),
            "--run-workers", str(self.run_workers), "--grace", "3",
        ]  # fmt: skip
        self.procs.append(subprocess.Popen(serve, cwd=ROOT, env=self.env, stdout=log, stderr=log))
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(self.url + "/livez", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or self.procs[0].poll() is not None:
                self.stop()
                raise RuntimeError("server did not start:\n" + self.log())
            time.sleep(0.2)

    def web_worker_pids(self) -> list[int]:
        """The uvicorn worker processes (children of uvicorn's supervisor)."""
        for master in _children(self.procs[0].pid):
            if b"uvicorn" in Path(f"/proc/{master}/cmdline").read_bytes():
                return _children(master) if self.workers > 1 else [master]
        return []

    def kill_one_worker(self) -> int | None:
        pids = self.web_worker_pids()
        if len(pids) < 2:
            return None
        os.kill(pids[0], signal.SIGKILL)
        return pids[0]

    def celery_pool_pids(self) -> list[int]:
        """The processes that execute runs (children of each Celery worker's master)."""
        pids = []
        for child in _children(self.procs[0].pid):
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            if b"celery" in cmdline and b"worker" in cmdline:
                pids.extend(_children(child))
        return pids

    def run_worker(self, run_id: int) -> str:
        """`Run.worker` (node:pid) — straight from PostgreSQL when possible: a Django
        shell takes a second or more on a busy machine, longer than a turn."""
        url = self.env["DATABASE_URL"]
        if url.startswith(("postgres://", "postgresql://")):
            with _postgres_admin(url) as conn:
                row = conn.execute("SELECT worker FROM chat_run WHERE id = %s", (run_id,))
                found = row.fetchone()
                return str(found[0]) if found else ""
        return str(
            self.json(
                "from chat.models import Run\nimport json\n"
                f"print(json.dumps(Run.objects.get(pk={run_id}).worker))"
            )
        )

    def kill_run_process(self, run_id: int) -> int | None:
        """SIGKILL the Celery pool process executing run `run_id` (mid-turn)."""
        worker = self.run_worker(run_id)
        pid = int(worker.rpartition(":")[2]) if worker else 0
        if pid not in self.celery_pool_pids():
            return None
        os.kill(pid, signal.SIGKILL)
        return pid

    def kill_busy_run_process(self) -> int | None:
        """SIGKILL a Celery pool process — one executing a run if there is one, else any
        (whatever executes runs at this moment)."""
        pool = self.celery_pool_pids()
        if not pool:
            return None
        busy = [pid for pid in self._running_run_pids() if pid in pool]
        pid = (busy or pool)[0]
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        return pid

    def _running_run_pids(self) -> list[int]:
        url = self.env["DATABASE_URL"]
        if not url.startswith(("postgres://", "postgresql://")):
            return []
        with _postgres_admin(url) as conn:
            rows = conn.execute("SELECT worker FROM chat_run WHERE status = 'running'")
            workers = [str(row[0]) for row in rows.fetchall()]
        return [int(w.rpartition(":")[2]) for w in workers if w.rpartition(":")[2].isdigit()]

    def terminate_db_connections(self) -> int:
        """pg_terminate_backend every connection of the server's database (web workers,
        Celery, beat): what a PostgreSQL restart or failover does to them. Returns how many."""
        if not self._pg_admin_url or not self._pg_name:
            raise RuntimeError("only a server on its own PostgreSQL database")
        with _postgres_admin(self._pg_admin_url) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (self._pg_name,),
            ).fetchall()
        return sum(1 for (done,) in rows if done)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self._shell is not None:
            self._shell.kill()
            self._shell.wait()
            self._shell = None
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs.clear()
        if self.run_workers:
            broker_cleanup(self.env)
        if self._pg_admin_url and self._pg_name:
            with _postgres_admin(self._pg_admin_url) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self._pg_name}" WITH (FORCE)')
            self._pg_name = None

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def broker_url(env: dict[str, str]) -> str:
    """The broker those settings give (chat/settings.py: REDIS_URL's next database)."""
    if env.get("CELERY_BROKER_URL"):
        return env["CELERY_BROKER_URL"]
    parts = urlsplit(env["REDIS_URL"])
    db = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(db + 1) % 16}"))


def broker_cleanup(env: dict[str, str]) -> None:
    """Drop the queue of a finished server or test and its unacknowledged messages (a
    SIGKILLed worker's message would otherwise come back after the visibility timeout)."""
    import redis

    queue = env["CELERY_QUEUE"]
    client = redis.Redis.from_url(broker_url(env))
    # The queue, and kombu's bindings of the exchange named after it.
    client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
    for tag, raw in client.hscan_iter("unacked"):
        try:
            _message, _exchange, routing_key = json.loads(raw)
        except ValueError:
            continue
        if routing_key == queue:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)
    client.close()


class CeleryWorker:
    """One `celery -A chat worker` (concurrency 1, optionally with beat embedded) in a
    session of its own, so `kill()` takes its master and pool process down together, like
    a machine that dies."""

    def __init__(self, tmp: Path, env: dict[str, str], name: str, *, beat: bool = False):
        self.name = name
        self.env = env
        self.log_path = tmp / f"celery-{name}.log"
        argv = [
            sys.executable, "-m", "celery", "-A", "chat", "worker", "--hostname", f"{name}@%h",
            "--concurrency", "1", "--without-mingle", "--without-gossip", "--loglevel", "INFO",
        ]  # fmt: skip
        if beat:
            argv += ["--beat", "--schedule", str(tmp / f"beat-{name}")]
        self.log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=self.log, stderr=self.log, start_new_session=True
        )

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while b" ready." not in self.log_path.read_bytes():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"celery worker {self.name} did not start:\n{self.text()}")
            time.sleep(0.1)

    def pool_pids(self) -> list[int]:
        return _children(self.proc.pid)

    def kill(self) -> None:
        """SIGKILL the whole worker (master and pool) at once."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")
