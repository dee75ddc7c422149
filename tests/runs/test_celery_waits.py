"""Waits survive process death (issue 21), on real Celery workers and a real session host.

1. Runs waiting on MCP elicitations (the 2026-07-28 demo server, and a 2025-11-25 server
   through the `manage.py mcp_session_host` process) hold no Celery worker: the whole
   worker is SIGKILLed while they wait; the answers, given afterwards, still resume the
   runs on another worker, which finish them.
2. The session host process is SIGKILLed while a 2025-11-25 call waits on a person: its
   lease goes stale, the reaper (beat) ends the call visibly (the card says the request was
   interrupted, the model gets MCP_HOST_INTERRUPTED) and the run finishes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import pytest

from chat.core.services import conversation_create
from chat.mcphost.models import McpServer
from chat.models import Event, Run, RunAttempt, Wait
from chat.usecases import message_post_user
from questionnaires.elicitations.services import elicitation_answer
from questionnaires.models import Elicitation
from tests.support.liveserver import ROOT
from tests.support.mcp_servers import make_server, serve

from .test_celery_worker import _wait, celery_env  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


class SessionHost:
    def __init__(self, env: dict[str, str], log) -> None:
        argv = [sys.executable, "manage.py", "mcp_session_host"]
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True
        )

    def kill(self) -> None:
        with_group = os.getpgid(self.proc.pid)
        os.killpg(with_group, signal.SIGKILL)
        self.proc.wait(10)


@pytest.fixture
def host_env(celery_env, settings, tmp_path):  # noqa: F811 (the imported fixture)
    settings.MCP_SESSION_HOST = "process"
    settings.MCP_HOST_LEASE_SECONDS = 3
    settings.MCP_HOST_GRACE_SECONDS = 0.5
    extra = {"MCP_HOST_LEASE_SECONDS": "3", "MCP_HOST_GRACE_SECONDS": "0.5"}
    log = open(tmp_path / "host.log", "ab")  # noqa: SIM115 - owned by the test
    hosts: list[SessionHost] = []

    def start_host() -> SessionHost:
        worker_env = {**os.environ, **_env_of(celery_env), **extra}
        host = SessionHost(worker_env, log)
        hosts.append(host)
        return host

    yield celery_env, extra, start_host
    for host in hosts:
        if host.proc.poll() is None:
            host.kill()
    log.close()


def _env_of(start: Any) -> dict[str, str]:
    """The environment the celery_env fixture gives its workers (read back from it)."""
    from django.db import connection

    db = connection.settings_dict
    return {
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "DJANGO_SETTINGS_MODULE": "chat.settings",
        "AGENT_RUNNER": "celery",
        "CELERY_QUEUE": start.queue,
    }


def _conversation(user, script: str | None = None):
    conversation = conversation_create(owner=user, agent="scripted")
    if script:
        conversation.state = {"script": script}
        conversation.save(update_fields=["state"])
    return conversation


def _card(conversation) -> Elicitation:
    return Elicitation.objects.get(conversation=conversation, status="pending")


def _run(conversation) -> Run:
    return conversation.runs.get()


def test_waits_survive_a_killed_worker_and_the_answers_resume_the_runs(host_env, user, monkeypatch):
    start, extra, start_host = host_env
    start_host()
    first = start("waits-a", **extra)
    McpServer.objects.create(name="demo", url="builtin:demo", agents=["scripted"])
    with serve(make_server()) as url:
        McpServer.objects.create(name="srv", url=url, agents=["scripted"])
        modern = _conversation(user, "mcp_demo")
        legacy = _conversation(user, "mcp_srv")
        message_post_user(conversation=modern, content="A table, please")
        message_post_user(conversation=legacy, content="Book, please")
        for conversation in (modern, legacy):
            _wait(
                lambda c=conversation: _run(c).status == "suspended",
                60,
                "the run to suspend",
                [first],
            )
        # no worker holds a waiting run: every attempt so far ended suspended
        assert set(RunAttempt.objects.values_list("outcome", flat=True)) == {"suspended"}
        first.kill()  # the whole worker dies while the people think
        second = start("waits-b", beat=True, **extra)
        elicitation_answer(
            elicitation=_card(modern),
            action="accept",
            data={"answer-date": ["2026-05-01"], "answer-party_size": ["3"]},
            user=user,
        )
        elicitation_answer(
            elicitation=_card(legacy),
            action="accept",
            data={"answer-size": ["4"], "answer-seating": ["outdoor"]},
            user=user,
        )
        for conversation in (modern, legacy):
            _wait(lambda c=conversation: _run(c).status == "finished", 60, "the run", [second])
    results = [
        str(e.data["result"]) for e in Event.objects.filter(name="tool_result").order_by("id")
    ]
    assert any("for 3 on 2026-05-01" in r for r in results), results
    assert any("booked 4 outdoor" in r for r in results), results
    for conversation in (modern, legacy):
        run = _run(conversation)
        assert run.stop_reason == "completed", run.error
        assert not run.attempt_log.filter(outcome="lost").exists()
    assert not Wait.objects.filter(status="open").exists()


def test_a_killed_session_host_ends_its_calls_visibly(host_env, user):
    start, extra, start_host = host_env
    host = start_host()
    worker = start("waits-c", beat=True, **extra)
    with serve(make_server()) as url:
        McpServer.objects.create(name="srv", url=url, agents=["scripted"])
        conversation = _conversation(user, "mcp_srv")
        message_post_user(conversation=conversation, content="Book, please")
        _wait(
            lambda: Elicitation.objects.filter(status="pending").exists(), 60, "the card", [worker]
        )
        host.kill()
        _wait(lambda: _run(conversation).status == "finished", 60, "the run", [worker])
    card = Elicitation.objects.get()
    assert (card.status, card.refused_code) == ("abandoned", "host_interrupted")
    (result,) = Event.objects.filter(name="tool_result")
    assert result.data["result"]["error_code"] == "MCP_HOST_INTERRUPTED"
