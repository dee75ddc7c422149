"""A real uvicorn server (own SQLite file, ASGI lifespan on) for MCP client tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


class Server:
    def __init__(self, url: str, env: dict[str, str]) -> None:
        self.url = url
        self.env = env

    def shell(self, code: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return result.stdout

    def json(self, code: str):
        """Run Django code whose last line prints one JSON value; return it."""
        return json.loads(self.shell(code).strip().splitlines()[-1])


@pytest.fixture(scope="session")
def mcp_server(tmp_path_factory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("mcp")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "LLM_BASE_URL")
    }
    env.update(
        DATABASE_URL=f"sqlite:///{tmp / 'mcp.sqlite3'}",
        DJANGO_SETTINGS_MODULE="chat.settings",
        AGENT_RUNNER="thread",
        PYTHONUNBUFFERED="1",
    )
    server = Server(f"http://127.0.0.1:{port}", env)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - closed in teardown
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "chat.asgi:application",
            "--port",
            str(port),
            "--lifespan",
            "on",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(server.url + "/accounts/login/", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError((tmp / "server.log").read_text()) from None
            time.sleep(0.2)
    yield server
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
