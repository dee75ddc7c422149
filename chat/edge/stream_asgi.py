"""The event-stream views' own ASGI entry: Django's views without Django's request cycle.

Under ASGI, Django gives every request a thread of its own for its synchronous parts and
runs each middleware hook through it (thread hand-offs both ways). Profiled on a stream
open, that was about 40 % of the CPU, and at 1,000 concurrent opens thread start-ups
capped opens at ~150/s. A stream open needs none of it: the views do their database work
on the fan-out's threads (`chat.edge.fanout`). So `chat.asgi` hands GET requests for the two
stream views (found with Django's URL resolver, so `urls.py` stays the one place that
names them) to `serve`, which builds the same request object, applies what those views
rely on from the middleware stack (host check, HTTPS redirect and security headers,
skill-token scope, language, lazy session), calls the view and streams its response until
the client disconnects. Django's test client, and any request this doesn't take, still
reach the same views through the full stack.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping
from typing import Any

from django.core.exceptions import BadRequest, SuspiciousOperation
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import Resolver404, resolve
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.module_loading import import_string

from chat.edge.sse import EventStreamResponse

logger = logging.getLogger("django.request")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

# The two stream views by URL name: the API's is a django-ninja operation, so what the
# resolver returns is ninja's view for its path (which runs `api.events`).
STREAM_VIEWS = frozenset({"api:events", "chat:events"})
View = tuple[Callable[..., Awaitable[HttpResponseBase]], tuple[Any, ...], dict[str, Any]]


def match(scope: Scope) -> View | None:
    """The stream view for this request and its arguments, or None (Django serves it)."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]  # what Django resolves (its path_info)
    if scope.get("method") != "GET" or not path.endswith("/events"):
        return None
    try:
        found = resolve(path)
    except (Resolver404, BadRequest):  # Django answers it (404, or 400 `invalid_id`)
        return None
    return (found.func, found.args, found.kwargs) if found.view_name in STREAM_VIEWS else None


async def serve(view: View, scope: Scope, receive: Receive, send: Send) -> None:
    # Only what the open stream needs outlives this call: not the request or the response.
    start, body = await _response(view, scope)
    await send(start)
    del start  # (its headers)
    if isinstance(body, bytes):
        await send({"type": "http.response.body", "body": body})
    else:
        await _stream(body, receive, send)


async def _response(
    view: View, scope: Scope
) -> tuple[dict[str, Any], bytes | AsyncGenerator[bytes, None]]:
    """Run the view; return the response's start message and its body (bytes or frames)."""
    func, args, kwargs = view
    request = ASGIRequest(scope, io.BytesIO())
    try:
        response = _before(request) or await func(request, *args, **kwargs)
    except SuspiciousOperation as exc:  # a disallowed Host header, as Django answers it
        logger.warning("%s", exc)
        response = HttpResponse(status=400)
    except Exception:
        logger.exception("Internal Server Error: %s", request.path)
        response = HttpResponse(status=500)
    _after(request, response)
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.items()]
    headers += [
        (b"Set-Cookie", c.output(header="").encode().strip()) for c in response.cookies.values()
    ]
    start = {"type": "http.response.start", "status": response.status_code, "headers": headers}
    if isinstance(response, EventStreamResponse):
        return start, response.frames  # sent as they are, without Django's wrappers
    if response.streaming:
        return start, aiter(response)  # type: ignore[arg-type]
    assert isinstance(response, HttpResponse)  # noqa: S101 - the views return either kind
    return start, response.content


_GO_ON = HttpResponse()  # what the "rest of the stack" answers the middleware we borrow


def _go_on(request: HttpRequest) -> HttpResponse:
    return _GO_ON


# What this entry does with each of `settings.MIDDLEWARE`, by its dotted path: borrowed
# (the class itself is run, below, by these names), reproduced by hand, or not needed by
# a stream — with why. tests/edge/test_stream_asgi.py checks these three name exactly the
# settings' list, so a middleware added to the stack fails that test until it is decided
# on here, and that BORROWED keeps the stack's order.
SECURITY = "django.middleware.security.SecurityMiddleware"
SKILL_SCOPE = "chat.edge.http.SkillTokenScopeMiddleware"
SESSION = "django.contrib.sessions.middleware.SessionMiddleware"
X_FRAME = "django.middleware.clickjacking.XFrameOptionsMiddleware"
BORROWED = (SECURITY, SKILL_SCOPE, SESSION, X_FRAME)
REPRODUCED = {
    "django.middleware.common.CommonMiddleware": "its host check (`request.get_host()`)",
    "django.middleware.locale.LocaleMiddleware": "the language from cookie or Accept-Language, "
    "`Content-Language` and `Vary` (these URLs have no language prefix)",
}
NOT_NEEDED = {
    "chat.obs.middleware.ObservabilityMiddleware": "a stream lasts as long as its tab, so a "
    "request-latency histogram would record tab lifetimes; streams have their own gauges "
    "(`STREAMS_OPEN`, `STREAMS_REFUSED`)",
    "whitenoise.middleware.WhiteNoiseMiddleware": "serves static files; a stream URL is none",
    "chat.edge.http.RequestGuardMiddleware": "guards form posts; streams are GET only",
    "chat.core.dbfaults.ConnectionLossRetryMiddleware": "the stream's queries run on the "
    "fan-out's threads (chat.edge.fanout), which have their own reconnect",
    "django.middleware.csrf.CsrfViewMiddleware": "streams are GET only",
    "django.contrib.auth.middleware.AuthenticationMiddleware": "the view reads the session's "
    "user itself (`stream_access_for_session`), or the bearer token",
    "chat.edge.timezones.PersonTimeZoneMiddleware": "a stream renders no time",
    "django.contrib.messages.middleware.MessageMiddleware": "a stream shows no flash messages",
    "django_htmx.middleware.HtmxMiddleware": "the stream views read no htmx header",
    "csp.middleware.CSPMiddleware": "an event stream is not a document: no policy applies",
    "axes.middleware.AxesMiddleware": "locks out failed logins; a stream never logs in",
}


@functools.cache
def _middleware_class(path: str) -> Any:
    return import_string(path)


def _borrowed(path: str) -> Any:
    """A fresh instance, as Django's stack would have: some read settings when built."""
    return _middleware_class(path)(_go_on)


def _before(request: HttpRequest) -> HttpResponseBase | None:
    """The request side of the middleware the stream views rely on."""
    request.get_host()  # raises DisallowedHost like CommonMiddleware would
    redirect: HttpResponseBase | None = _borrowed(SECURITY).process_request(request)
    if redirect is not None:
        return redirect
    refusal: HttpResponseBase = _borrowed(SKILL_SCOPE)(request)
    if refusal is not _GO_ON:
        return refusal
    # LocaleMiddleware's choice (cookie, Accept-Language); these URLs have no language prefix.
    translation.activate(translation.get_language_from_request(request))
    request.LANGUAGE_CODE = translation.get_language()
    _borrowed(SESSION).process_request(request)  # lazy: loaded only if a view asks
    return None


def _after(request: HttpRequest, response: Any) -> None:
    """The response side: security headers, language, `Vary: Cookie` for a read session."""
    session = getattr(request, "session", None)
    if session is not None and session.accessed:
        patch_vary_headers(response, ("Cookie",))
    if hasattr(request, "LANGUAGE_CODE"):
        patch_vary_headers(response, ("Accept-Language",))
        response.headers.setdefault("Content-Language", request.LANGUAGE_CODE)
    _borrowed(SECURITY).process_response(request, response)
    _borrowed(X_FRAME).process_response(request, response)


async def _stream(frames: AsyncGenerator[bytes, None], receive: Receive, send: Send) -> None:
    """Send the frames until they end or the client goes (then the stream is cancelled,
    which ends its generator and frees its slot)."""
    task = asyncio.current_task()
    assert task is not None  # noqa: S101
    gone = False

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        task.cancel()

    watcher = asyncio.ensure_future(watch())
    try:
        async with contextlib.aclosing(frames):
            async for frame in frames:
                await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    except asyncio.CancelledError:
        if not gone:
            raise  # the server is stopping
        task.uncancel()
    finally:
        watcher.cancel()
