"""Traces: off by default; on, one trace runs from the posted message through the Celery
task (its context carried in the task message) to the model call, and a question's wait
is a span under the step that asked it."""

from __future__ import annotations

import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.urls import reverse
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from chat import celery_app
from chat.core.services import conversation_create
from chat.models import Run, RunStatus
from chat.obs import tracing
from chat.obs.logs import CELERY_HEADER


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, []),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, ["otlp"]),
        ({"OTEL_TRACES_EXPORTER": "console,otlp"}, ["console", "otlp"]),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, []),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, []),
    ],
)
def test_tracing_is_off_unless_the_standard_variables_turn_it_on(monkeypatch, env, expected):
    for name in (
        "OTEL_TRACES_EXPORTER",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_SDK_DISABLED",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert tracing.exporters_configured() == expected


def test_tracing_is_off_in_a_default_process():
    assert not tracing.enabled()
    with tracing.span("chat.nothing") as span:
        assert not span.is_recording()
    assert tracing.carrier() == ""


def test_an_unsupported_exporter_is_said_plainly(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    with pytest.raises(tracing.TracingMisconfigured, match="http/protobuf"):
        tracing._exporter("otlp")
    with pytest.raises(tracing.TracingMisconfigured, match="otlp, console or none"):
        tracing._exporter("jaeger")


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    tracing.tracing_setup(exporter=exporter, set_global=False)
    yield exporter
    tracing.tracing_teardown()


@pytest.fixture
def celery_worker(settings):
    """A real Celery worker (solo pool, in a thread of this process) on the configured
    broker: the task arrives as a message with headers, as it does on a worker machine."""
    settings.AGENT_RUNNER = "celery"
    with start_worker(celery_app, perform_ping_check=False, shutdown_timeout=20) as worker:
        yield worker


def _spans(exporter: InMemorySpanExporter, *names: str, timeout: float = 30) -> list:
    """The finished spans once those named are among them: the run's row says finished a
    moment before its worker closes the run's and the task's spans."""
    deadline = time.monotonic() + timeout
    while True:
        finished = list(exporter.get_finished_spans())
        if set(names) <= {s.name for s in finished} or time.monotonic() > deadline:
            return finished
        time.sleep(0.02)


def _finished(run_id: int, status: str = RunStatus.FINISHED, timeout: float = 60) -> Run:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = Run.objects.get(pk=run_id)
        if run.status == status:
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} is {Run.objects.get(pk=run_id).status}")


@pytest.mark.django_db(transaction=True)
def test_one_trace_from_the_posted_message_through_celery_to_the_model_call(
    client, user, spans, celery_worker
):
    client.force_login(user)
    conversation = conversation_create(owner=user, title="traced", agent="scripted")
    response = client.post(
        reverse("chat:message_send", args=[conversation.pk]), {"content": "hello"}
    )
    assert response.status_code == 302
    run = _finished(Run.objects.get(conversation=conversation).pk)
    # the request that asked for the run is named in its row (and its task's header)
    assert run.request_id == response["X-Request-ID"]
    finished = _spans(spans, "chat.run", "run/chat.run_execute", "chat.model_call")
    by_name = {span.name: span for span in finished}
    model = by_name["chat.model_call"]
    trace_id = model.context.trace_id
    request = next(s for s in finished if s.kind.name == "SERVER")
    publish = next(s for s in finished if s.name.startswith("apply_async/"))
    task = next(s for s in finished if s.name == "run/chat.run_execute")
    run_span = by_name["chat.run"]
    assert request.parent is None and request.context.trace_id == trace_id
    assert publish.context.trace_id == trace_id and publish.parent.span_id == (
        request.context.span_id
    )
    assert task.parent.span_id == publish.context.span_id  # through the message's headers
    assert run_span.parent.span_id == task.context.span_id
    assert model.parent.span_id == run_span.context.span_id
    assert model.attributes["gen_ai.request.model"] == "scripted"
    assert model.attributes["gen_ai.usage.output_tokens"] > 0
    assert model.attributes["chat.usage.estimated"] is True
    assert run_span.attributes["chat.run_id"] == run.pk

    # The tour's first card waits for the person; answering it (another request, another
    # task) closes the wait: its span is under the run that asked, linked to the answer.
    card = conversation.messages.filter(role="assistant").latest("seq")
    spans.clear()
    answer = client.post(
        reverse("chat:questionnaire_submit", args=[conversation.pk, card.pk]),
        {"questionnaire_id": f"{card.pk}_q1", "answer-1": "Just curious"},
    )
    assert answer.status_code == 302
    _finished(Run.objects.filter(conversation=conversation).latest("id").pk)
    later = _spans(spans, "chat.wait", "run/chat.run_execute")
    wait = next(s for s in later if s.name == "chat.wait")
    assert wait.context.trace_id == trace_id
    assert wait.parent.span_id == run_span.context.span_id
    assert wait.attributes["chat.wait.kind"] == "inline"
    assert wait.attributes["chat.wait.outcome"] == "answered"
    answering = next(s for s in later if s.kind.name == "SERVER")
    assert [link.context.span_id for link in wait.links] == [answering.context.span_id]
    assert wait.start_time < run_span.end_time  # it began when the card was shown


def test_the_request_id_travels_in_the_task_message():
    from types import SimpleNamespace

    from structlog.contextvars import clear_contextvars

    from chat.obs import logs

    logs.request_bind("req-42")
    headers: dict[str, object] = {}
    logs._publish(headers=headers)
    assert headers == {CELERY_HEADER: "req-42"}
    clear_contextvars()
    logs._prerun(task=SimpleNamespace(request=SimpleNamespace(**{CELERY_HEADER: "req-42"})))
    assert logs.current("request_id") == "req-42"
    logs._prerun(task=SimpleNamespace(request=SimpleNamespace(**{CELERY_HEADER: "a b\n"})))
    assert logs.current("request_id") is None  # not plainly an id: not believed
    logs._postrun()
