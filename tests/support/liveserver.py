"""A real server for benchmarks, load tests and browser tests.

Starts the app the way `manage.py serve` does (uvicorn, optionally several worker
processes and agent-run workers) on a free loopback port, with a database of its own:
a fresh SQLite file, or a fresh PostgreSQL database created next to the one
`DATABASE_URL` names (dropped again on stop). Loopback only.
"""

from __future__ import annotations

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
            DJANGO_SETTINGS_MODULE="chat.settings",
            AGENT_RUNNER="worker" if run_workers else "thread",
            DEBUG="0",
            PYTHONUNBUFFERED="1",
        )
        if redis_url:
            self.env["REDIS_URL"] = redis_url
        self.env.update(env or {})
        self.procs: list[subprocess.Popen[bytes]] = []
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
        """Run Django code in the server's database; returns what it printed."""
        return self.manage("shell", "--no-imports", "-v", "0", "-c", code)

    def json(self, code: str) -> Any:
        """Run Django code whose last printed line is one JSON value; return it."""
        return json.loads(self.shell(code).strip().splitlines()[-1])

    def start(self, *, migrate: bool = True) -> LiveServer:
        """Migrate, then `manage.py serve` (the production launcher) on the free port."""
        if migrate:
            self.manage("migrate", "--noinput", "-v0")
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
        serve = [
            sys.executable, "manage.py", "serve", "--host", "127.0.0.1",
            "--port", str(self.port), "--workers", str(self.workers),
            "--run-workers", str(self.run_workers),
        ]  # fmt: skip
        self.procs.append(subprocess.Popen(serve, cwd=ROOT, env=self.env, stdout=log, stderr=log))
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 40) -> None:
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

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs.clear()
        if self._pg_admin_url and self._pg_name:
            with _postgres_admin(self._pg_admin_url) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self._pg_name}" WITH (FORCE)')
            self._pg_name = None

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
