"""Structured logs: JSON lines with the request, run, conversation and pseudonymous user
ids; plain lines stay the default."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import textwrap

import httpx
import pytest
from django.urls import reverse
from structlog.contextvars import clear_contextvars

from chat.core.services import conversation_create
from chat.obs import logs
from tests.support import wait_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def json_lines():
    """Lines the JSON formatter writes for the given loggers."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.json_formatter())
    attached: list[logging.Logger] = []

    def attach(*names: str) -> None:
        for name in names:
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            attached.append(logger)

    def lines() -> list[dict]:
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    attach.lines = lines  # type: ignore[attr-defined]
    yield attach
    for logger in attached:
        logger.removeHandler(handler)
    clear_contextvars()


def test_a_json_line_carries_every_id_and_a_pseudonym_not_the_user_id(json_lines):
    json_lines("chat.tests")
    logs.request_bind("req-1")
    logs.user_bind(7)
    logging.getLogger("chat.tests").warning("one %s", "thing")
    with logs.run_bound(run_id=3, conversation_id=4, user_id=7):
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("chat.tests").exception("failed")
    clear_contextvars()
    logging.getLogger("chat.tests").info("outside")
    first, second, third = json_lines.lines()
    assert first["event"] == "one thing" and first["level"] == "warning"
    assert first["logger"] == "chat.tests" and first["timestamp"].endswith("Z")
    assert first["request_id"] == "req-1" and first["run_id"] is None
    assert first["user"] == logs.pseudonym(7) and len(first["user"]) == 16
    assert first["user"] != "7" and logs.pseudonym(8) != logs.pseudonym(7)
    assert (second["run_id"], second["conversation_id"], second["request_id"]) == (3, 4, "req-1")
    assert "ValueError: boom" in second["exception"]
    assert {k: third[k] for k in logs.IDS} == dict.fromkeys(logs.IDS)


def test_the_request_id_is_made_or_kept_and_returned(client):
    made = client.get("/livez")["X-Request-ID"]
    assert len(made) == 32 and int(made, 16) >= 0
    assert client.get("/livez", headers={"X-Request-ID": "lb-7.a:b_c"})["X-Request-ID"] == (
        "lb-7.a:b_c"
    )
    forged = client.get("/livez", headers={"X-Request-ID": 'x" level=error'})["X-Request-ID"]
    assert forged != 'x" level=error' and len(forged) == 32


def test_json_access_lines_name_the_request_conversation_and_user(
    client_in, user, settings, json_lines
):
    settings.LOG_ACCESS = True
    json_lines("chat.access")
    conversation = conversation_create(owner=user, title="logged", agent="echo")
    response = client_in.get(reverse("chat:conversation", args=[conversation.pk]) + "?x=secret")
    (line,) = json_lines.lines()
    assert line["request_id"] == response["X-Request-ID"]
    assert line["conversation_id"] == conversation.pk
    assert line["user"] == logs.pseudonym(user.pk)
    assert (line["method"], line["status"], line["view"]) == ("GET", 200, "chat:conversation")
    assert line["path"] == f"/conversations/{conversation.pk}/"  # no query string
    assert line["duration_ms"] > 0 and "secret" not in json.dumps(line)


def test_an_api_clients_access_line_names_its_user(api, user, settings, json_lines):
    settings.LOG_ACCESS = True
    json_lines("chat.access")
    api.post("/api/v1/conversations/", {"title": "x"})
    (line,) = json_lines.lines()
    assert line["user"] == logs.pseudonym(user.pk) and line["status"] == 201


BROKEN_MODEL = """
steps:
  - turns:
      - error: {code: llm_unreachable, message: "The model endpoint is unreachable."}
"""


def test_a_runs_lines_carry_its_ids_and_the_request_that_asked_for_it(
    client_in, user, json_lines, monkeypatch
):
    from chat.agent.llm.scripted import script_parse
    from chat.runs import turn

    monkeypatch.setattr(turn, "script_load", lambda name, lang: script_parse(BROKEN_MODEL))
    json_lines("chat.runs.runner")
    conversation = conversation_create(owner=user, title="fails", agent="scripted")
    response = client_in.post(
        reverse("chat:message_send", args=[conversation.pk]), {"content": "hi"}
    )
    run = conversation.runs.get()
    (line,) = json_lines.lines()
    assert "llm_unreachable" in line["event"] and line["level"] == "warning"
    assert line["run_id"] == run.pk and line["conversation_id"] == conversation.pk
    assert line["request_id"] == response["X-Request-ID"] == run.request_id
    assert line["user"] == logs.pseudonym(user.pk)


def test_log_format_json_makes_every_line_json_and_plain_stays_the_default(settings):
    assert os.environ.get("LOG_FORMAT") is None and settings.LOG_FORMAT == "plain"
    assert settings.LOGGING["handlers"]["console"]["formatter"] == "plain"
    code = textwrap.dedent(
        """
        import logging
        from django.conf import settings
        from django.utils.log import configure_logging
        configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)  # as django.setup()
        logging.getLogger("chat.somewhere").warning("hello %s", "there")
        """
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "chat.settings"}

    def run(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code],
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    as_json = run(LOG_FORMAT="json")
    line = json.loads(as_json.stderr.strip().splitlines()[-1])
    assert line["event"] == "hello there" and set(logs.IDS) <= set(line)
    bad = run(LOG_FORMAT="xml")
    assert bad.returncode != 0 and "LOG_FORMAT must be plain or json" in bad.stderr


def test_the_production_shape_writes_nothing_but_json_lines(tmp_path):
    """`manage.py serve` with Celery workers + beat and LOG_FORMAT=json (issue 33.6):
    before, serve's own lines, Celery's start-up banners and its running-as-root warning
    (CI runs as root) were plain text between the JSON lines."""
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("REQUIRE_SERVICES=1 but REDIS_URL is not set")
        pytest.skip("REDIS_URL is not set: Celery workers need a broker")
    from tests.support.liveserver import LiveServer

    with LiveServer(
        tmp_path,
        redis_url=redis_url,
        run_workers=1,
        settings_module="tests.support.settings_fast",
        env={"LOG_FORMAT": "json", "AGENT_WORKER_CONCURRENCY": "1"},
    ) as server:
        token = server.shell(
            "from django.contrib.auth.models import User\n"
            "from chat.core.services import api_token_create\n"
            "print(api_token_create(user=User.objects.create_user('logs'))[1])"
        ).strip()
        api = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        conversation = api.post("/api/v1/conversations/", json={"agent": "echo"}).json()["id"]
        api.post(
            f"/api/v1/conversations/{conversation}/messages",
            json={"role": "user", "content": "hello"},
        )
        wait_for(
            lambda: (
                len(api.get(f"/api/v1/conversations/{conversation}/messages").json()["messages"])
                >= 2
            ),
            "the echo reply",
            timeout=120,
        )
        log = server.log()
    lines = [line for line in log.splitlines() if line.strip()]
    assert any("Serving http://" in line for line in lines)
    not_json = []
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            not_json.append(line)
    assert not_json == []
