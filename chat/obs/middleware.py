"""Per request: its id, its log context, its latency, and (JSON logs) its access line.

First in `settings.MIDDLEWARE`, so the time counted is the whole of Django's work and
every refusal — a skill token's 401, a too-large body's 413 — is counted too. The id is
the proxy's `X-Request-ID` when that is plainly an id, else a new one, and goes back in
the response's `X-Request-ID`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from chat.obs import logs, metrics

access_log = logging.getLogger("chat.access")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNRESOLVED = "<unresolved>"


class ObservabilityMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.access = settings.LOG_ACCESS

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        request_id = logs.request_id_new(request.headers.get(logs.REQUEST_ID_HEADER))
        logs.request_bind(request_id, request)
        response = self.get_response(request)
        seconds = time.perf_counter() - started
        match = request.resolver_match
        view = (match.view_name if match is not None else "") or UNRESOLVED
        method = request.method if request.method in METHODS else "other"
        status = response.status_code
        metrics.HTTP_REQUEST_SECONDS.labels(view, method, str(status)).observe(seconds)
        response[logs.REQUEST_ID_HEADER] = request_id
        if self.access:
            access_log.info(
                "%s %s %s %.1f ms",
                method,
                request.path,
                status,
                seconds * 1000,
                extra={
                    "method": method,
                    "path": request.path,
                    "status": status,
                    "view": view,
                    "duration_ms": round(seconds * 1000, 2),
                },
            )
        return response

    def process_view(
        self,
        request: HttpRequest,
        _view: Callable[..., object],
        _args: tuple[object, ...],
        kwargs: dict[str, object],
    ) -> None:
        # (The user is named when a line is written, once the view has loaded it: looking
        # here would cost an API request its session's queries.)
        conversation_id = kwargs.get("conversation_id")
        if isinstance(conversation_id, int):
            logs.conversation_bind(conversation_id)
