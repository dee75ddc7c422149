"""Agent runtime benchmarks (issue 5), against a real uvicorn server (own SQLite file).

- `agent_overhead_ms`: post a user message (JSON API) -> the first `text_delta` arrives
  at an SSE client; scripted backend that answers instantly; median of 25.
- `events_per_second`: events streamed to one SSE client during a run that emits ~750
  events (250 tool calls: tool_call, tool_result and message_done each).
"""

from __future__ import annotations

import contextlib
import json
import queue
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.liveserver import LiveServer

SAMPLES = 25


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


def _conversation(client: httpx.Client, server: LiveServer, script: str) -> int:
    response = client.post(f"{server.url}/api/v1/conversations/", json={"agent": "scripted"})
    response.raise_for_status()
    conversation_id: int = response.json()["id"]
    code = (
        "from chat.models import Conversation\n"
        f"Conversation.objects.filter(pk={conversation_id}).update(state={{'script': '{script}'}})"
    )
    server.shell(code)
    return conversation_id


def _stream(client: httpx.Client, server: LiveServer, conversation_id: int) -> Stream:
    stream = Stream(
        dict(client.headers), f"{server.url}/api/v1/conversations/{conversation_id}/events"
    )
    stream.start()
    stream.ready.wait(10)
    return stream


def _post(client: httpx.Client, server: LiveServer, conversation_id: int, text: str) -> None:
    url = f"{server.url}/api/v1/conversations/{conversation_id}/messages"
    client.post(url, json={"role": "user", "content": text}).raise_for_status()


def _overhead(client: httpx.Client, server: LiveServer) -> float:
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


def _throughput(client: httpx.Client, server: LiveServer) -> float:
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
    with (
        tempfile.TemporaryDirectory() as tmp,
        LiveServer(Path(tmp), env={"LOG_LEVEL": "WARNING"}) as server,
    ):
        server.shell(
            "from django.contrib.auth.models import User\nUser.objects.create_user('bench')"
        )
        token = server.manage("create_api_token", "bench").strip().split()[-1]
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(headers=headers, timeout=30) as client:
            overhead = _overhead(client, server)
            rate = _throughput(client, server)
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
