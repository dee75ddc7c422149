"""`manage.py serve`: which processes it starts, that one exiting is started again, and
that one that keeps exiting stops them all."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from chat.management.commands import serve as serve_module


class FakeProcess:
    started: list[FakeProcess] = []

    def __init__(self, argv) -> None:
        self.argv = argv
        self.returncode = None
        self.terminated = False
        FakeProcess.started.append(self)

    def poll(self):
        # The beat dies at once; everything else keeps running until terminated.
        if "beat" in self.argv and self.returncode is None:
            self.returncode = 1
        return self.returncode

    def terminate(self) -> None:
        self.terminated = True
        self.returncode = -15

    def wait(self, timeout=None) -> int:
        return self.returncode

    def kill(self) -> None:
        self.returncode = -9


@pytest.fixture
def processes(monkeypatch):
    FakeProcess.started = []
    monkeypatch.setattr(serve_module.subprocess, "Popen", FakeProcess)
    monkeypatch.setattr(serve_module.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(serve_module.signal, "signal", lambda *args: None)
    monkeypatch.setattr(serve_module.Command, "_reap", lambda self: None)
    return FakeProcess.started


def test_celery_runner_starts_web_workers_celery_workers_and_beat(processes, settings):
    settings.AGENT_RUNNER, settings.REDIS_URL = "celery", "redis://127.0.0.1:6379/0"
    settings.AGENT_WORKER_CONCURRENCY = 3
    with pytest.raises(CommandError, match="celery-beat exited .* 6 times within a minute"):
        call_command("serve", "--workers", "2", "--run-workers", "2", "--grace", "0")
    argvs = [p.argv for p in processes]
    assert argvs[0][1:4] == ["-m", "uvicorn", "chat.asgi:application"]
    workers = [a for a in argvs if "worker" in a]
    assert [a[a.index("--hostname") + 1] for a in workers] == ["runs0@%h", "runs1@%h"]
    assert all(a[a.index("--concurrency") + 1] == "3" for a in workers)
    # The beat was started again five times, then its sixth exit stopped every process.
    assert sum("beat" in a for a in argvs) == 6
    assert all(p.terminated for p in processes if "beat" not in p.argv)


def test_a_process_that_exits_once_is_started_again(processes, settings, monkeypatch):
    settings.AGENT_RUNNER = "thread"
    monkeypatch.setattr(serve_module.Command, "_reap", lambda self: None)
    handlers = {}
    monkeypatch.setattr(serve_module.signal, "signal", lambda sig, h: handlers.setdefault(sig, h))

    def poll(self):
        if self is processes[0]:
            self.returncode = 1  # the first web server crashes
        else:
            handlers[serve_module.signal.SIGTERM]()  # its replacement runs until stopped
        return self.returncode

    monkeypatch.setattr(FakeProcess, "poll", poll)
    call_command("serve", "--workers", "1", "--grace", "0")
    assert len(processes) == 2 and processes[1].argv == processes[0].argv
    assert processes[1].terminated  # stopped by the signal, not by the crash


def test_thread_runner_starts_only_the_web_workers(processes, settings, monkeypatch):
    settings.AGENT_RUNNER = "thread"
    reaped = []
    monkeypatch.setattr(serve_module.Command, "_reap", lambda self: reaped.append(1))

    def web_dies(self):
        self.returncode = 3
        return 3

    monkeypatch.setattr(FakeProcess, "poll", web_dies)
    with pytest.raises(CommandError, match="web exited"):
        call_command("serve", "--workers", "1", "--grace", "0")
    assert [p.argv[2] for p in processes] == ["uvicorn"] * 6  # started again 5 times
    assert reaped == [1]  # serve reaps lost runs itself (with Celery too)


def test_uvicorn_believes_forwarded_headers_only_from_trusted_proxies(
    processes, settings, monkeypatch
):
    """Issue 22: uvicorn trusts X-Forwarded-For from 127.0.0.1 unless told otherwise, so a
    loopback client could pick its own address (dodging lockouts and throttling)."""
    monkeypatch.setattr(FakeProcess, "poll", lambda self: 3)  # the web exits at once
    settings.AGENT_RUNNER, settings.TRUSTED_PROXIES = "thread", []
    with pytest.raises(CommandError):
        call_command("serve", "--workers", "1", "--grace", "0")
    web = processes[0].argv
    assert "--no-proxy-headers" in web and "--forwarded-allow-ips" not in web
    processes.clear()
    settings.TRUSTED_PROXIES = ["10.0.0.5", "10.1.0.0/16"]
    with pytest.raises(CommandError):
        call_command("serve", "--workers", "1", "--grace", "0")
    web = processes[0].argv
    assert web[web.index("--forwarded-allow-ips") + 1] == "10.0.0.5,10.1.0.0/16"
    assert "--no-proxy-headers" not in web
