"""Agent runtime benchmarks (issue 5), against a real uvicorn server (own SQLite file).

- `agent_overhead_ms`: post a user message (JSON API) -> the first `text_delta` arrives
  at an SSE client; scripted backend that answers instantly; median of 25.
- `events_per_second`: events streamed to one SSE client during a run that emits ~750
  events (250 tool calls: tool_call, tool_result and message_done each).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = 25


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    def __init__(self, tmp: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "LLM_BASE_URL")
        }
        self.env.update(
            DATABASE_URL=f"sqlite:///{tmp / 'bench.sqlite3'}",
            DJANGO_SETTINGS_MODULE="chat.settings",
            AGENT_RUNNER="thread",
            DEBUG="0",
            LOG_LEVEL="WARNING",
        )
        self.log = open(tmp / "server.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc: subprocess.Popen[bytes] | None = None

    def manage(self, *args: str) -> str:
        out = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout

    def start(self) -> None:
        self.manage("migrate", "--noinput")
        cmd = [sys.executable, "-m", "uvicorn", "chat.asgi:application", "--port", str(self.port)]
        cmd += ["--log-level", "warning"]
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.url + "/accounts/login/", timeout=2)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()  # open SSE streams keep uvicorn waiting: then kill
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.log.close()


class Stream(threading.Thread):
    """Reads one conversation's SSE stream; puts (arrival time, name, data) on a queue."""

    def __init__(self, headers: dict[str, str], url: str) -> None:
        super().__init__(daemon=True)
        self.client, self.url = httpx.Client(headers=headers), url
        self.events: queue.Queue[tuple[float, str, dict[str, Any]]] = queue.Queue()
        self.ready = threading.Event()

    def run(self) -> None:
        with contextlib.suppress(httpx.HTTPError):  # the server stops at the end
            self._read()

    def _read(self) -> None:
        with self.client.stream("GET", self.url, timeout=None) as response:
            name = ""
            for line in response.iter_lines():
                if line.startswith(": connected"):
                    self.ready.set()
                elif line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    self.events.put((time.perf_counter(), name, json.loads(line[6:])))

    def wait_for(self, name: str, timeout: float = 30.0) -> float:
        deadline = time.monotonic() + timeout
        while True:
            at, event, _ = self.events.get(timeout=max(deadline - time.monotonic(), 0.01))
            if event == name:
                return at


def _conversation(client: httpx.Client, server: Server, script: str) -> int:
    response = client.post(f"{server.url}/api/v1/conversations/", json={"agent": "scripted"})
    response.raise_for_status()
    conversation_id: int = response.json()["id"]
    code = (
        "from chat.models import Conversation\n"
        f"Conversation.objects.filter(pk={conversation_id}).update(state={{'script': '{script}'}})"
    )
    server.manage("shell", "-c", code)
    return conversation_id


def _stream(client: httpx.Client, server: Server, conversation_id: int) -> Stream:
    stream = Stream(
        dict(client.headers), f"{server.url}/api/v1/conversations/{conversation_id}/events"
    )
    stream.start()
    stream.ready.wait(10)
    return stream


def _post(client: httpx.Client, server: Server, conversation_id: int, text: str) -> None:
    url = f"{server.url}/api/v1/conversations/{conversation_id}/messages"
    client.post(url, json={"role": "user", "content": text}).raise_for_status()


def _overhead(client: httpx.Client, server: Server) -> float:
    conversation_id = _conversation(client, server, "bench_reply")
    stream = _stream(client, server, conversation_id)
    samples = []
    for n in range(SAMPLES + 3):
        start = time.perf_counter()
        _post(client, server, conversation_id, f"message {n}")
        first = stream.wait_for("text_delta")
        stream.wait_for("run_finished")
        if n >= 3:  # warm-up
            samples.append((first - start) * 1000)
    return statistics.median(samples)


def _throughput(client: httpx.Client, server: Server) -> float:
    conversation_id = _conversation(client, server, "bench_events")
    stream = _stream(client, server, conversation_id)
    _post(client, server, conversation_id, "go")
    first = stream.wait_for("run_started")
    count = 1
    while True:
        at, name, _ = stream.events.get(timeout=60)
        count += 1
        if name == "run_finished":
            return count / (at - first)


def run() -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        server.start()
        try:
            server.manage(
                "shell",
                "-c",
                "from django.contrib.auth.models import User\n"
                "User.objects.create_user('bench', password='bench-pass-1')",
            )
            token = server.manage("create_api_token", "bench").strip().split()[-1]
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(headers=headers, timeout=30) as client:
                overhead = _overhead(client, server)
                rate = _throughput(client, server)
        finally:
            server.stop()
    return {
        "agent_overhead_ms": {"value": round(overhead, 1), "unit": "ms", "target": 50},
        "events_per_second": {
            "value": round(rate),
            "unit": "ev/s",
            "target": 500,
            "higher_is_better": True,
        },
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
