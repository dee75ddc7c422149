"""ASGI entry point.

- `http`: Django, except path prefixes in `MOUNTS` (other ASGI apps, e.g. the MCP endpoint)
  and the event-stream views, which `chat.edge.stream_asgi` serves without Django's per-request
  thread and middleware hops (thousands of open streams per process).
- `lifespan`: runs the startup/shutdown of mounted apps that need it.

Agent runs off the web workers go through Celery (`AGENT_RUNNER=celery`, chat/celery.py);
the channel layer only wakes event streams.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable
from typing import Any, cast

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chat.settings")

django_application = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware  # noqa: E402

from chat.edge import mcp as chat_mcp  # noqa: E402
from chat.edge import stream_asgi  # noqa: E402
from chat.edge.stream_asgi import Receive, Scope, Send  # noqa: E402
from chat.obs import metrics  # noqa: E402

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# (path prefix, app). A mounted app sees the full path. The MCP endpoint is outside Django,
# so it gets its request spans from the ASGI instrumentation (no-ops while tracing is off).
MOUNTS: list[tuple[str, ASGIApp]] = [(chat_mcp.PATH, OpenTelemetryMiddleware(chat_mcp.application))]
# Async context managers entered at server start-up and left at shutdown.
LIFESPAN_CONTEXTS: list[Callable[[], contextlib.AbstractAsyncContextManager[Any]]] = [
    chat_mcp.lifespan
]


async def http_router(scope: Scope, receive: Receive, send: Send) -> None:
    path = scope.get("path", "")
    for prefix, app in MOUNTS:
        if path == prefix.rstrip("/") or path.startswith(prefix):
            await app(scope, receive, send)
            return
    stream_view = stream_asgi.match(scope)
    if stream_view is not None:
        await stream_asgi.serve(stream_view, scope, receive, send)
        return
    # Django's handler is typed for plain dicts; ASGI servers pass them.
    await django_application(cast(dict[str, Any], scope), receive, cast(Any, send))


async def lifespan(scope: Scope, receive: Receive, send: Send) -> None:
    async with contextlib.AsyncExitStack() as stack:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    for factory in LIFESPAN_CONTEXTS:
                        await stack.enter_async_context(factory())
                except Exception as exc:  # report, don't hang the server
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await stack.aclose()
                metrics.process_exit()  # this web worker's live gauges (open streams)
                await send({"type": "lifespan.shutdown.complete"})
                return


application = ProtocolTypeRouter({"http": http_router, "lifespan": lifespan})
