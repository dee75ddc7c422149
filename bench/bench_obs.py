"""Operating it (issue 26): what metrics + JSON logs cost a request.

- `obs_request_overhead_ratio`: CPU time per request of a realistic mix — the
  conversation page (20 messages), the API's message list, and a message posted to an
  echo conversation (its turn runs in the request) — with the observability middleware
  (request id, latency histogram, JSON access line) and JSON logs, ÷ the same requests
  without the middleware and with plain logs. Metrics are in multiprocess mode (memory-
  mapped files, as `make serve` runs them). The figure is the median over 31 pairs of
  neighbouring rounds (30 requests each, the order alternating) of their ratio, so a busy
  machine's drift falls on both sides; CPU time of this process only
  (`time.process_time`), not the wall clock other sessions' load would inflate.
- `obs_json_log_line_us`, `obs_metric_observe_us`: one JSON log line (formatted and
  written to a file) and one labelled histogram observation in multiprocess mode.

Runs in a child process of its own (the settings it needs are read at import).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PAIRS = 31
REQUESTS_PER_ROUND = 30  # 10 of each kind


def _child(tmp: Path) -> dict[str, float]:
    import logging

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    call_command("migrate", verbosity=0)
    from chat.core.services import api_token_create, conversation_create, message_create
    from chat.models import Role
    from chat.obs import metrics

    User = django.contrib.auth.get_user_model()  # type: ignore[attr-defined]
    user = User.objects.create_user(username="bench", password="bench-pw-123")  # noqa: S106
    page_conversation = conversation_create(owner=user, title="page", agent="echo")
    for n in range(10):
        message_create(conversation=page_conversation, role=Role.USER, content=f"Question {n}?")
        message_create(
            conversation=page_conversation,
            role=Role.ASSISTANT,
            content=f"An answer with **Markdown** and a [link](https://example.com) #{n}.",
        )
    echo = conversation_create(owner=user, title="echo", agent="echo")
    _token, raw = api_token_create(user=user)
    page_url = reverse("chat:conversation", args=[page_conversation.pk])
    api_url = f"/api/v1/conversations/{page_conversation.pk}/messages"
    post_url = reverse("chat:message_send", args=[echo.pk])
    middleware = list(settings.MIDDLEWARE)
    observed = "chat.obs.middleware.ObservabilityMiddleware"
    json_handler = logging.getLogger().handlers[0]  # the console handler: JSON lines
    plain = logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s")
    json_formatter = json_handler.formatter

    def client(instrumented: bool) -> Client:
        """A client whose handler loads the middleware of this set-up."""
        settings.MIDDLEWARE = (
            middleware if instrumented else [m for m in middleware if m != observed]
        )
        settings.LOG_ACCESS = instrumented
        made = Client()
        made.force_login(user)
        made.get(page_url)  # load the middleware chain, warm caches
        return made

    def round_(made: Client) -> float:
        started = time.process_time()
        for n in range(REQUESTS_PER_ROUND // 3):
            assert made.get(page_url).status_code == 200
            assert made.get(api_url, headers={"Authorization": f"Bearer {raw}"}).status_code == 200
            assert made.post(post_url, {"content": f"hello {n}"}).status_code == 302
        return (time.process_time() - started) / REQUESTS_PER_ROUND

    same = os.environ.get("BENCH_OBS_AA") == "1"  # (noise check: both sides plain)
    clients = {True: client(not same), False: client(False)}
    times: dict[bool, list[float]] = {True: [], False: []}
    ratios = []
    for n in range(PAIRS):
        for instrumented in (n % 2 == 0, n % 2 == 1):  # alternate who goes first
            json_handler.setFormatter(json_formatter if instrumented and not same else plain)
            times[instrumented].append(round_(clients[instrumented]))
        ratios.append(times[True][-1] / times[False][-1])  # neighbours in time: same load
    ratio = statistics.median(ratios)

    logger = logging.getLogger("chat.bench")
    json_handler.setFormatter(json_formatter)
    started = time.process_time()
    for n in range(2000):
        logger.info("a line %s", n, extra={"status": 200})
    log_us = (time.process_time() - started) / 2000 * 1e6
    histogram = metrics.HTTP_REQUEST_SECONDS.labels("bench", "GET", "200")
    started = time.process_time()
    for _ in range(20000):
        histogram.observe(0.012)
    observe_us = (time.process_time() - started) / 20000 * 1e6
    return {
        "ratio": ratio,
        "ms_plain": statistics.median(times[False]) * 1000,
        "ms_observed": statistics.median(times[True]) * 1000,
        "log_us": log_us,
        "observe_us": observe_us,
    }


def run() -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "metrics").mkdir()
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
            "DJANGO_SETTINGS_MODULE": "chat.settings",
            "AGENT_RUNNER": "inline",
            "PROMETHEUS_MULTIPROC_DIR": str(tmp / "metrics"),
            "LOG_FORMAT": "json",
            "SECRET_KEY": "bench-only-secret-key",
        }
        for variable in ("REDIS_URL", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
            env.pop(variable, None)
        with open(tmp / "log.jsonl", "w") as log:
            done = subprocess.run(
                [sys.executable, "-m", "bench.bench_obs", str(tmp)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=log if not os.environ.get("BENCH_OBS_LOG") else None,
                text=True,
                check=True,
                cwd=Path(__file__).resolve().parent.parent,
            )
        figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "obs_request_overhead_ratio": {
            "value": round(figures["ratio"], 3),
            "unit": "x",
            "target": 1.05,
            "detail": f"{figures['ms_observed']:.2f} ms vs {figures['ms_plain']:.2f} ms CPU",
        },
        "obs_json_log_line_us": {"value": round(figures["log_us"], 1), "unit": "µs"},
        "obs_metric_observe_us": {"value": round(figures["observe_us"], 2), "unit": "µs"},
    }


if __name__ == "__main__":
    print(json.dumps(_child(Path(sys.argv[1]))))
