"""A Redis server of one's own, on a free loopback port, that can be restarted.

The load test's fault matrix restarts Redis under a running server; doing that to the
machine's shared Redis would hit every other test and program using it. This one keeps
nothing on disk, so a restart loses every key — queued Celery messages, channel-layer
groups — exactly like a crashed production Redis without persistence.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from tests.support.liveserver import free_port


def redis_available() -> bool:
    return shutil.which("redis-server") is not None


class RedisServer:
    """`with RedisServer(tmp) as redis:` — `redis.url`, `redis.restart(down=1.0)`."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = tmp / f"redis-{self.port}.log"

    def start(self) -> RedisServer:
        argv = [
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", str(self.tmp),
            "--logfile", str(self.log_path),
        ]  # fmt: skip
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def kill(self) -> None:
        """SIGKILL: what a crash or an OOM kill does (no goodbye to the clients)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self, down: float = 1.0) -> None:
        """Kill it, stay down `down` seconds, start it again empty on the same port."""
        self.kill()
        time.sleep(down)
        self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
