"""/metrics: never public, and its counters move when people use the product."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from django.urls import reverse

from chat.core.services import conversation_create
from chat.models import ModelUsage, Run
from tests.support.scrape import TOKEN, moved, scrape, value

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(settings):
    settings.METRICS_TOKEN = TOKEN
    return TOKEN


def test_metrics_are_a_404_without_a_configured_token(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", headers={"Authorization": "Bearer x"}).status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x"])
def test_a_missing_or_wrong_token_is_401_in_the_api_error_shape(client, token, header):
    headers = {"Authorization": header} if header else {}
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"chat_" not in response.content


def test_bad_metrics_tokens_are_throttled_like_any_bearer_token(client, token, settings):
    settings.BAD_TOKEN_LIMIT_PER_MINUTE = 2
    codes = [
        client.get("/metrics", headers={"Authorization": "Bearer no"}).status_code for _ in range(3)
    ]
    assert codes == [401, 401, 429]
    assert scrape(client)  # the right token is still served


def test_only_get(client, token):
    response = client.post("/metrics", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 405


def test_a_turn_moves_the_counters(client_in, user, token):
    """A person sends a message to the scripted agent (offline, its tokens estimated):
    request latency, the run, its attempt and queue wait, the model call and its tokens
    all count; the open card shows up as an open wait."""
    conversation = conversation_create(owner=user, title="m", agent="scripted")
    before = scrape(client_in)
    response = client_in.post(
        reverse("chat:message_send", args=[conversation.pk]), {"content": "hello"}
    )
    assert response.status_code == 302
    after = scrape(client_in)
    run = Run.objects.get(conversation=conversation)
    assert run.stop_reason == "awaiting_user_input"  # the tour's first card
    request = {"view": "chat:message_send", "method": "POST", "status": "302"}
    assert moved(before, after, "chat_http_request_duration_seconds_count", **request) == 1
    assert moved(before, after, "chat_runs_total", agent="scripted", outcome=run.stop_reason) == 1
    assert moved(before, after, "chat_run_duration_seconds_count", agent="scripted") == 1
    assert moved(before, after, "chat_run_attempts_total", agent="scripted", reason="first") == 1
    assert moved(before, after, "chat_run_queue_wait_seconds_count", agent="scripted") == 1
    attempt = {"agent": "scripted", "outcome": "finished"}
    assert moved(before, after, "chat_run_attempt_duration_seconds_count", **attempt) == 1
    assert moved(before, after, "chat_model_calls_total", model="scripted", outcome="ok") == 1
    usage = ModelUsage.objects.get(run=run)
    tokens_in = moved(before, after, "chat_model_tokens_total", model="scripted", direction="in")
    tokens_out = moved(before, after, "chat_model_tokens_total", model="scripted", direction="out")
    assert (tokens_in, tokens_out) == (usage.prompt_tokens, usage.completion_tokens)
    assert tokens_in > 0 and tokens_out > 0
    estimated = {"model": "scripted", "direction": "out"}
    assert moved(before, after, "chat_model_tokens_estimated_total", **estimated) == tokens_out
    assert value(after, "chat_waits_open", kind="inline") == 1
    assert value(after, "chat_waits_oldest_age_seconds", kind="inline") >= 0
    assert value(after, "chat_waits_open", kind="elicitation") == 0  # every kind listed


def test_answers_and_skips_count(client_in, user, token, django_capture_on_commit_callbacks):
    """Counted once the answer commits (a refused, rolled-back one counts nothing)."""
    from questionnaires.asks.services import ask_answer, ask_create
    from questionnaires.inline.services import questionnaire_answer
    from tests.support.asking import SPEC_PAYLOAD

    conversation = conversation_create(owner=user, title="a", agent="scripted")
    client_in.post(reverse("chat:message_send", args=[conversation.pk]), {"content": "go"})
    card = conversation.messages.filter(role="assistant").latest("seq")
    external = conversation_create(owner=user, title="asks", agent="external")
    ask_create(conversation=external, payload=SPEC_PAYLOAD, turn_id="turn_1")
    before = scrape(client_in)
    with django_capture_on_commit_callbacks(execute=True):
        questionnaire_answer(
            conversation=conversation,
            message_id=card.pk,
            questionnaire_id=f"{card.pk}_q1",
            answers={"q1": "Just curious"},
            other_text={},
            user=user,
            lang="en",
        )
    skip = {"type": "structured_answer", "field": SPEC_PAYLOAD["field"], "turn_id": "turn_1"}
    with django_capture_on_commit_callbacks(execute=True):
        ask_answer(conversation=external, answer={**skip, "source": "user_skipped"})
    after = scrape(client_in)
    assert moved(before, after, "chat_answers_total", kind="inline", outcome="answered") == 1
    assert moved(before, after, "chat_answers_total", kind="ask", outcome="skipped") == 1
    assert moved(before, after, "chat_answers_total", kind="ask", outcome="answered") == 0


BROKEN = """
steps:
  - turns:
      - text: |
          ```questionnaire
          title: Broken
          questions: []
          ```
      - text: |
          ```questionnaire
          title: Broken
          questions: []
          ```
      - text: |
          ```questionnaire
          title: Broken
          questions: []
          ```
"""


def test_self_check_repairs_and_give_ups_count(
    client_in, user, token, monkeypatch, django_capture_on_commit_callbacks
):
    from chat.agent.llm.scripted import script_parse
    from chat.runs import turn

    monkeypatch.setattr(turn, "script_load", lambda name, lang: script_parse(BROKEN))
    conversation = conversation_create(owner=user, title="s", agent="scripted")
    before = scrape(client_in)
    with django_capture_on_commit_callbacks(execute=True):
        client_in.post(reverse("chat:message_send", args=[conversation.pk]), {"content": "go"})
    after = scrape(client_in)
    assert moved(before, after, "chat_self_check_total", agent="scripted", result="repair") == 2
    assert moved(before, after, "chat_self_check_total", agent="scripted", result="gave_up") == 1
    assert moved(before, after, "chat_model_calls_total", model="scripted", outcome="ok") == 3


def test_the_method_label_is_bounded(client, token):
    before = scrape(client)
    client.generic("BREW", "/livez")
    after = scrape(client)
    bounded = {"view": "livez", "method": "other"}
    assert (
        sum(
            moved(before, after, "chat_http_request_duration_seconds_count", status=s, **bounded)
            for s in ("200", "405")
        )
        == 1
    )


def test_metrics_of_several_processes_are_summed_and_dead_ones_leave_no_open_streams(tmp_path):
    """Multiprocess mode (PROMETHEUS_MULTIPROC_DIR, as `make serve` runs): two processes
    record, a third scrapes; the finished ones' open-stream gauges no longer count."""
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    record = textwrap.dedent(
        """
        from chat.obs import metrics
        metrics.RUNS.labels("echo", "completed").inc()
        metrics.MODEL_TOKENS.labels("m", "in").inc(7)
        metrics.STREAMS_OPEN.inc()
        """
    )
    for _ in range(2):
        subprocess.run([sys.executable, "-c", record], env=env, check=True, timeout=60)
    scrape_code = textwrap.dedent(
        """
        from chat.obs import metrics
        print(metrics.exposition(metrics.ScrapeRegistry()).decode())
        print("removed", metrics.multiproc_reset())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", scrape_code],
        env=env,
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    ).stdout
    assert 'chat_runs_total{agent="echo",outcome="completed"} 2.0' in out
    assert 'chat_model_tokens_total{direction="in",model="m"} 14.0' in out
    assert "chat_event_streams_open 0.0" in out  # both recorders have exited
    assert int(out.split("removed")[-1]) >= 2  # a new start begins from nothing
    assert not list(tmp_path.glob("counter_*.db"))


@pytest.mark.parametrize(
    ("value", "expected"),
    [("127.0.0.1:9464", ("127.0.0.1", 9464)), ("9464", ("127.0.0.1", 9464)),
     (":9464", ("127.0.0.1", 9464)), ("[::1]:9464", ("::1", 9464)),
     ("10.0.0.5:9100", ("10.0.0.5", 9100))],
)  # fmt: skip
def test_metrics_bind_is_host_and_port(value, expected):
    from chat.management.commands.serve import metrics_bind

    assert metrics_bind(value) == expected


@pytest.mark.parametrize("value", ["host:", "host:http", "host:0", "host:70000"])
def test_a_bad_metrics_bind_is_refused_at_start(value):
    from django.core.management.base import CommandError

    from chat.management.commands.serve import metrics_bind

    with pytest.raises(CommandError, match="METRICS_BIND"):
        metrics_bind(value)


def test_metrics_serve_needs_the_multiprocess_directory(monkeypatch):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    with pytest.raises(CommandError, match="PROMETHEUS_MULTIPROC_DIR"):
        call_command("metrics_serve", "127.0.0.1:9464")
