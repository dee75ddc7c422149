"""One trace from the posted message to the model call and the MCP call, as an OTLP
receiver that shares no code with the app decodes it (issue 33.4).

The app runs as in production (`manage.py serve`: uvicorn, DEBUG off) with only the
standard `OTEL_*` variables set; a plain HTTP server here decodes what it receives with
the OTLP protobuf definitions (`opentelemetry-proto`). Before, under uvicorn there was no
request span (Django's instrumentation serves ASGI only with
`opentelemetry-instrumentation-asgi` installed) and the OpenAI and MCP SDKs' HTTP calls
(httpx2) had no client spans: `chat.run` was a root span and nothing reached the peers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.support import wait_for
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.liveserver import LiveServer
from tests.support.mcp_servers import make_modern_server, serve

SETUP = """
from django.contrib.auth.models import User
from chat.core.services import api_token_create
from chat.mcphost.models import McpServer
user, _ = User.objects.get_or_create(username="traced")
McpServer.objects.create(name="modern", url="{mcp}", agents=["openai"])
print(api_token_create(user=user)[1])
"""


@dataclass(frozen=True)
class Received:
    name: str
    trace_id: str
    span_id: str
    parent: str
    kind: int  # the OTLP enum: 2 server, 3 client
    attributes: dict[str, Any]


class OtlpReceiver:
    """`POST /v1/traces` (OTLP/HTTP, protobuf), decoded into `spans`."""

    def __init__(self) -> None:
        self.spans: list[Received] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        receiver.spans += [_received(span) for span in scope.spans]
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _received(span: Any) -> Received:
    attributes = {}
    for item in span.attributes:
        value = item.value
        attributes[item.key] = getattr(value, value.WhichOneof("value") or "string_value")
    return Received(
        name=span.name,
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent=span.parent_span_id.hex(),
        kind=span.kind,
        attributes=attributes,
    )


def _ancestors(span: Received, by_id: dict[str, Received]) -> Iterator[Received]:
    while span.parent in by_id:
        span = by_id[span.parent]
        yield span


def test_one_trace_from_the_request_through_the_run_to_the_model_and_the_mcp_server(tmp_path):
    with (
        FakeOpenAI() as model,
        serve(make_modern_server()) as mcp_url,
        OtlpReceiver() as otlp,
        LiveServer(
            tmp_path,
            settings_module="tests.support.settings_fast",
            env={
                "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.url,
                "OTEL_BSP_SCHEDULE_DELAY": "100",
                "LLM_BASE_URL": model.base_url,
                "LLM_API_KEY": "test",
                "LLM_MODEL": "fake-model",
            },
        ) as server,
    ):
        model.replies = [
            Reply(tool_calls=[("call_1", "modern__add", '{"a": 2, "b": 3}')]),
            Reply(text="It is 5."),
        ]
        token = server.shell(SETUP.format(mcp=mcp_url)).strip()
        api = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        conversation = api.post("/api/v1/conversations/", json={"agent": "openai"}).json()["id"]
        posted = api.post(
            f"/api/v1/conversations/{conversation}/messages",
            json={"role": "user", "content": "What is 2 + 3?"},
        )
        assert posted.status_code == 201

        def answered() -> bool:
            listed = api.get(f"/api/v1/conversations/{conversation}/messages").json()
            return any(m["content"] == "It is 5." for m in listed["messages"])

        wait_for(answered, "the model's answer", timeout=90)
        names = ("chat.run", "chat.model_call", "chat.mcp_call")

        def complete() -> list[Received]:
            spans = list(otlp.spans)
            model_calls = [s for s in spans if s.name == "chat.model_call"]
            return spans if set(names) <= {s.name for s in spans} and len(model_calls) == 2 else []

        spans = wait_for(complete, "the run's spans to be exported", timeout=90)
        by_id = {s.span_id: s for s in spans}
        run = next(s for s in spans if s.name == "chat.run")
        request = [s for s in _ancestors(run, by_id) if s.kind == 2]
        assert request, "chat.run has no request span above it"
        assert request[-1].attributes.get("http.route", "").endswith("messages") or (
            "messages" in request[-1].name
        ), request[-1]
        trace_id = request[-1].trace_id
        for name in names:
            for span in (s for s in spans if s.name == name):
                assert span.trace_id == trace_id, span
                assert run in [span, *_ancestors(span, by_id)], span
        # the SDKs' HTTP calls (httpx2) are client spans under the product's spans…
        clients = [s for s in spans if s.kind == 3 and s.trace_id == trace_id]
        model_span_ids = {s.span_id for s in spans if s.name == "chat.model_call"}
        mcp_span = next(s for s in spans if s.name == "chat.mcp_call")
        to_model = [
            c for c in clients if model_span_ids & {a.span_id for a in _ancestors(c, by_id)}
        ]
        to_mcp = [c for c in clients if mcp_span in list(_ancestors(c, by_id))]
        assert to_model and to_mcp, clients
        # …and the trace reached the model endpoint with the request
        assert any(trace_id in h.get("traceparent", "") for h in model.headers), model.headers
