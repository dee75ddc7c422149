"""OpenTelemetry traces: off by default, on with the standard `OTEL_*` variables.

`OTEL_TRACES_EXPORTER` (`otlp`, `console`, comma-separated; `none`), or an
`OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` alone, turns tracing
on in every process (web workers, Celery pool processes, the session host); the SDK reads
the rest itself (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`,
`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`…). OTLP goes over HTTP/protobuf;
`OTEL_SDK_DISABLED=true` turns everything off.

Instrumented: Django requests (under uvicorn too: Django's instrumentation serves ASGI
requests only with `opentelemetry-instrumentation-asgi` installed), the MCP endpoint
mounted beside Django (`chat.asgi`), Celery (the task message carries the trace context,
so a run's spans continue the trace of the request that asked for it), and the HTTP
clients: httpx, and httpx2 — through which the OpenAI SDK (3.x) and the MCP SDK (2.x)
send, so a model call and an MCP call each have their client span and pass the trace on
(`traceparent`) to the model endpoint and the MCP server. The product's own spans: `chat.run` (one attempt),
`chat.model_call` (every model call, offline agents' too, with token counts),
`chat.mcp_call` (a tool call to an MCP server) and `chat.wait` (a question waiting for a
person: recorded when it closes, from when it opened, under the span that asked it).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.propagate import extract, inject
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import Attributes

SERVICE = "inline-questionnaire-chat"
_provider: TracerProvider | None = None
_tracer: trace.Tracer = trace.NoOpTracer()


class TracingMisconfigured(RuntimeError):
    pass


def _true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def exporters_configured() -> list[str]:
    """The exporters the environment asks for ([] = tracing off)."""
    if _true("OTEL_SDK_DISABLED"):
        return []
    raw = os.environ.get("OTEL_TRACES_EXPORTER", "").strip()
    if not raw:
        endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        raw = "otlp" if endpoint else "none"
    names = [n.strip().lower() for n in raw.split(",") if n.strip()]
    return [n for n in names if n != "none"]


def _exporter(name: str) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter()
    if name == "otlp":
        protocol = os.environ.get(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "")
        )
        if protocol and protocol != "http/protobuf":
            raise TracingMisconfigured(
                f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: this install exports OTLP over "
                "http/protobuf only (port 4318)."
            )
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    raise TracingMisconfigured(
        f"OTEL_TRACES_EXPORTER={name!r} is not supported here: use otlp, console or none."
    )


def enabled() -> bool:
    return _provider is not None


def tracing_setup(
    *, exporter: SpanExporter | None = None, set_global: bool = True, version: str = ""
) -> bool:
    """Turn tracing on in this process when the environment asks for it (or an exporter
    is given: tests). Idempotent; True when tracing is on."""
    global _provider, _tracer
    if _provider is not None:
        return True
    names = exporters_configured()
    if exporter is None and not names:
        return False
    attributes: dict[str, str] = {"service.version": version} if version else {}
    if not os.environ.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = SERVICE
    provider = TracerProvider(resource=Resource.create(attributes))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    for name in names:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    if set_global:
        trace.set_tracer_provider(provider)
    _instrument(provider)
    _provider = provider
    _tracer = provider.get_tracer("chat", version or None)
    return True


def _instrumentors() -> list[BaseInstrumentor]:
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.httpx import (
        HTTPX2ClientInstrumentor,
        HTTPXClientInstrumentor,
    )

    return [
        DjangoInstrumentor(),
        CeleryInstrumentor(),  # type: ignore[no-untyped-call]
        HTTPXClientInstrumentor(),
        HTTPX2ClientInstrumentor(),
    ]


def _instrument(provider: TracerProvider) -> None:
    for instrumentor in _instrumentors():
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument(tracer_provider=provider)


def tracing_teardown() -> None:
    """Undo `tracing_setup` (tests): instrumentations off, spans no longer recorded."""
    global _provider, _tracer
    for instrumentor in _instrumentors():
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
    if _provider is not None:
        _provider.shutdown()
    _provider = None
    _tracer = trace.NoOpTracer()


@contextmanager
def span(name: str, attributes: Attributes = None) -> Iterator[Span]:
    """A span of the product's own (a no-op costing a few hundred nanoseconds when off).
    An exception leaving it marks it as an error."""
    with _tracer.start_as_current_span(name, attributes=attributes) as current:
        yield current


def span_start(name: str, attributes: Attributes = None) -> Span:
    """A span that is not made current: enter it with `within` around each piece of work
    (a generator's steps, which may be closed from anywhere)."""
    return _tracer.start_span(name, attributes=attributes)


def within(current: Span) -> contextlib.AbstractContextManager[Span]:
    return trace.use_span(current, end_on_exit=False)


def carrier() -> str:
    """The current span's context as a W3C `traceparent` ("" when off or outside a span),
    for work that continues somewhere else later (a wait closed by another request)."""
    if _provider is None:
        return ""
    headers: dict[str, str] = {}
    inject(headers)
    return headers.get("traceparent", "")


def span_record(
    name: str,
    *,
    started: datetime,
    traceparent: str = "",
    attributes: Attributes = None,
    error: bool = False,
) -> None:
    """Record a span that began at `started` (another process, maybe days ago) and ends
    now, under the span `traceparent` names; the current span is linked to it."""
    if _provider is None:
        return
    parent = extract({"traceparent": traceparent}) if traceparent else otel_context.Context()
    here = trace.get_current_span().get_span_context()
    links = [trace.Link(here)] if here.is_valid else []
    recorded = _tracer.start_span(
        name,
        context=parent,
        attributes=attributes,
        start_time=int(started.timestamp() * 1e9),
        links=links,
    )
    if error:
        recorded.set_status(Status(StatusCode.ERROR))
    recorded.end()
