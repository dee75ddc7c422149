"""Bearer-token authentication for `/api/v1/` and the JSON error shape."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponseNotAllowed,
    JsonResponse,
)
from django.http.multipartparser import MultiPartParserError
from django.urls import Resolver404, resolve
from django.utils.translation import gettext as _
from django_htmx.middleware import HtmxDetails

from chat.core.errors import ChatError, NotFound
from chat.core.identity import is_skill_token
from chat.core.models import ApiToken, Conversation, hash_token
from chat.core.selectors import conversation_get_for_user
from chat.core.services import api_token_touch
from chat.core.text import text_problem
from questionnaires.protocol.jsontypes import JsonObject

logger = logging.getLogger(__name__)


def bearer_from_header(value: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header value, or None.

    The one bearer parser: API tokens, skill identity tokens and MCP run tokens alike."""
    scheme, _sep, token = (value or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


MAX_ID = 2**63 - 1
"""The largest id both databases store (a signed 64-bit integer)."""
_DIGITS = re.compile(r"[0-9]{1,19}")


class InvalidId(ChatError, BadRequest):
    """400 `invalid_id`. Also Django's `BadRequest`, so one raised while a URL is resolved
    (the `id` path converter) reaches `chat.edge.views.bad_request` and answers with the
    same code."""

    def __init__(self, name: str) -> None:
        super().__init__(
            "invalid_id",
            _("“%(name)s” must be a whole number from 0 to 9223372036854775807.") % {"name": name},
            details={"parameter": name},
        )


def parse_id(value: str | None, *, name: str, default: int | None = None) -> int:
    """The one integer parser for ids and cursors (URL ids, `Last-Event-ID`,
    `last_event_id`, `after`, `live`): ASCII digits only, 0 to 2^63 - 1, surrounding
    spaces allowed. Missing or blank gives `default` when there is one. Anything else —
    a sign, `²`, `①`, Arabic-Indic digits (which `int()` accepts), a number past what the
    database stores — is `InvalidId`, never a 500 and never silently another id."""
    text = (value or "").strip(" \t")
    if not text and default is not None:
        return default
    if _DIGITS.fullmatch(text) is None or int(text) > MAX_ID:
        raise InvalidId(name)
    return int(text)


class IdConverter:
    """The `<id:name>` path converter: `parse_id` for ids in URLs."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> int:
        return parse_id(value, name="id")

    def to_url(self, value: int) -> str:
        return str(int(value))


def bearer_token(request: HttpRequest) -> str | None:
    return bearer_from_header(request.headers.get("Authorization"))


def user_for_api_token(raw: str) -> User | None:
    try:
        token = ApiToken.objects.select_related("user").get(key_hash=hash_token(raw))
    except ApiToken.DoesNotExist:
        return None
    if not token.user.is_active:
        return None
    api_token_touch(token=token)
    return token.user


def error_response(error: ChatError) -> JsonResponse:
    response = JsonResponse(error.as_dict(), status=error.status)
    if "retry_after" in error.details:
        response["Retry-After"] = str(error.details["retry_after"])
    return response


class NonFiniteNumber(ValueError):
    """`NaN`, `Infinity`, `-Infinity` or a number too large for a float (`1e999`): not
    JSON (RFC 8259), and neither PostgreSQL's jsonb nor SQLite's JSON stores them."""


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise NonFiniteNumber(text)
    return number


def _not_a_number(name: str) -> float:
    raise NonFiniteNumber(name)


def _not_finite_message() -> str:
    return _("The request body is not valid JSON: numbers must be finite (no NaN or Infinity).")


def parse_json(text: str) -> object:
    """JSON as RFC 8259 has it: Python's parser without its non-finite numbers (raises
    `NonFiniteNumber`, a ValueError); `RecursionError` past Python's nesting limit."""
    return json.loads(text, parse_float=_finite, parse_constant=_not_a_number)


def json_body(request: HttpRequest) -> JsonObject:
    """The request's JSON object, or a ChatError: 413 `request_too_large`, 400
    `invalid_json` (not UTF-8, not JSON — `NaN`, `Infinity`, `1e999` included — or not
    an object), `json_too_deep` or `text_invalid` (a NUL or lone surrogate anywhere;
    `details.path` names it). Every request body the app reads as JSON comes through
    here (the API's parser, skill publishing)."""
    try:
        raw = request.body
    except RequestDataTooBig:
        raise too_large() from None
    try:
        body = parse_json(raw.decode("utf-8") or "{}")
    except RecursionError:
        raise _problem("json_too_deep", "$") from None
    except NonFiniteNumber:
        raise ChatError("invalid_json", _not_finite_message()) from None
    except (ValueError, UnicodeDecodeError):
        raise ChatError("invalid_json", _("The request body is not valid JSON.")) from None
    if not isinstance(body, dict):
        raise ChatError("invalid_json", _("The request body must be a JSON object."))
    problem = text_problem(body)
    if problem is not None:
        raise _problem(*problem)
    return body


def too_large() -> ChatError:
    return ChatError(
        "request_too_large",
        _("The request is larger than this server accepts."),
        status=413,
    )


def _problem(code: str, path: str) -> ChatError:
    messages = {
        "invalid_json": _not_finite_message(),
        "json_too_deep": _("The JSON is nested too deeply."),
        "text_invalid": _(
            "The text contains characters that can’t be stored (NUL or a lone surrogate)."
        ),
    }
    return ChatError(code, messages[code], details={"path": path})


def request_problem(request: HttpRequest) -> ChatError | None:
    """Why a form post can't be taken at all (too large, broken multipart, NUL bytes)."""
    try:
        fields = [(k, v) for k, values in request.POST.lists() for v in values]
    except RequestDataTooBig:
        return too_large()
    except (MultiPartParserError, SuspiciousOperation):
        return ChatError("invalid_body", _("The request body could not be read."))
    for key, value in fields:
        problem = text_problem(value) or text_problem(key)
        if problem is not None:
            return _problem(problem[0], key)
    return None


def client_address(request: HttpRequest) -> str:
    """The client's address as the ASGI server reports it. Behind a proxy that is the
    proxy's unless uvicorn trusts it (`TRUSTED_PROXIES`, passed on as
    `--forwarded-allow-ips`); nobody else can pick their own with `X-Forwarded-For`."""
    return str(request.META.get("REMOTE_ADDR", ""))


def bad_token_strike(address: str) -> ChatError:
    """The answer to a request whose token was refused: 401 `unauthorized`, or 429
    `too_many_attempts` (`Retry-After`) once ``address`` sent more than
    BAD_TOKEN_LIMIT_PER_MINUTE bad tokens this minute.

    Only refused tokens are counted and only they are throttled — a valid token is
    checked first and always served — so a client sending bad tokens never locks out
    another one behind the same address (a NAT, a load balancer)."""
    key = f"badtoken:{address}"
    cache.add(key, 0, timeout=60)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=60)
        count = 1
    if count > settings.BAD_TOKEN_LIMIT_PER_MINUTE:
        return ChatError(
            "too_many_attempts",
            _("Too many requests with an invalid token. Wait a minute and try again."),
            status=429,
            details={"retry_after": 60},
        )
    return ChatError(
        "unauthorized", _("Send a valid API token: Authorization: Bearer <token>."), status=401
    )


def request_check(request: HttpRequest) -> None:
    """What every JSON endpoint checks once the caller is known: query parameters that
    can be stored and searched (no NUL or lone surrogate: 400 `text_invalid` naming the
    parameter — PostgreSQL refuses a NUL in a query) and a form body that can be read
    (see `request_problem`)."""
    for key, values in request.GET.lists():
        for value in (key, *values):
            problem = text_problem(value)
            if problem is not None:
                raise _problem(problem[0], f"query.{key}")
    refused = request_problem(request) if request.method == "POST" else None
    if refused is not None:
        raise refused


class HtmxRequest(HttpRequest):
    """A page request as django-htmx's middleware leaves it (`request.htmx`)."""

    htmx: HtmxDetails


def signed_in(request: HttpRequest) -> User:
    """The person a page or API view serves (behind `login_required` or the API's bearer auth)."""
    user = request.user
    if not isinstance(user, User) or not user.is_authenticated:
        raise PermissionDenied
    return user


def conversation_for_page(request: HttpRequest, conversation_id: int) -> Conversation:
    """The signed-in user's conversation for a page or htmx view; anyone else's is a 404."""
    try:
        return conversation_get_for_user(user=signed_in(request), conversation_id=conversation_id)
    except NotFound:
        raise Http404() from None


class RequestGuardMiddleware:
    """Refuse a page or htmx form post that can't be taken (too large, broken multipart,
    NUL bytes in a field) with a 400/413 before any view reads it: nothing is stored,
    and nothing downstream (PostgreSQL, the protocol) ever sees such text. The JSON API
    does the same in its bearer auth (`chat.edge.apibase`), answering in its JSON error shape.

    A 405 from the JSON API (django-ninja answers it in plain text) gets its JSON error
    shape. Every response to a signed-in person is `Cache-Control: no-store` (a conversation
    must never come back from a shared or back-button cache after logout)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method == "POST" and not request.path_info.startswith("/api/"):
            refused = request_problem(request)
            if refused is not None:
                return HttpResponse(
                    refused.message, status=refused.status, content_type="text/plain; charset=utf-8"
                )
        response = self.get_response(request)
        if isinstance(response, HttpResponseNotAllowed) and request.path_info.startswith("/api/"):
            response = _method_not_allowed(request, response)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and "Cache-Control" not in response:
            response["Cache-Control"] = "no-store"
        return response


def _method_not_allowed(request: HttpRequest, response: HttpResponseNotAllowed) -> HttpResponse:
    """django-ninja's plain-text 405 in the API's error shape (its `Allow` header kept)."""
    refused = error_response(
        ChatError(
            "method_not_allowed",
            _("Method %(method)s is not allowed here.") % {"method": request.method},
            status=405,
        )
    )
    if response.has_header("Allow"):
        refused["Allow"] = response["Allow"]
    return refused


# url names (namespace "api") that accept a skill identity token
SKILL_ENDPOINTS = frozenset({"api:skills", "api:skill_upload", "api:skill_update"})


class SkillTokenScopeMiddleware:
    """401 `skill_token_not_allowed` for a skill identity token outside the skill API."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if is_skill_token(bearer_token(request) or "") and not _is_skill_endpoint(
            request.path_info
        ):
            return error_response(
                ChatError(
                    "skill_token_not_allowed",
                    _(
                        "A skill identity token only works for skill publishing "
                        "(/api/v1/kinds/skills); use a user API token here."
                    ),
                    status=401,
                )
            )
        return self.get_response(request)


def _is_skill_endpoint(path: str) -> bool:
    try:
        return resolve(path).view_name in SKILL_ENDPOINTS
    except Resolver404:
        return False


# --- a card's notice across a redirect (no JavaScript: post, redirect, get) --------------

NOTICE_TAG = "qc-notice"


def card_notice_add(request: HttpRequest, *, message_id: int, code: str, text: str) -> None:
    """Keep a notice for the card of `message_id` until the next page shows it (a form
    post answered by a redirect, so a reload never posts again)."""
    messages.info(request, text, extra_tags=f"{NOTICE_TAG}:{message_id}:{code}")


def card_notice_pop(request: HttpRequest) -> dict[str, object] | None:
    """The notice kept by `card_notice_add`, once: {message_id, code, text}, or None."""
    found = None
    for message in messages.get_messages(request):
        tag, _sep, rest = message.extra_tags.partition(":")
        message_id, _sep, code = rest.partition(":")
        if tag == NOTICE_TAG and message_id.isdigit():
            found = {"message_id": int(message_id), "code": code, "text": str(message.message)}
    return found
