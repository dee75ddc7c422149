"""Bearer-token authentication for `/api/v1/` and the JSON error shape."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from django.http import Http404, HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt

from chat.core.errors import ChatError, NotFound
from chat.core.identity import is_skill_token
from chat.core.models import ApiToken, Conversation, hash_token
from chat.core.selectors import conversation_get_for_user
from chat.core.services import api_token_touch

logger = logging.getLogger(__name__)


def bearer_from_header(value: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header value, or None.

    The one bearer parser: API tokens, skill identity tokens and MCP run tokens alike."""
    scheme, _sep, token = (value or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def bearer_token(request: HttpRequest) -> str | None:
    return bearer_from_header(request.headers.get("Authorization"))


def user_for_api_token(raw: str):
    try:
        token = ApiToken.objects.select_related("user").get(key_hash=hash_token(raw))
    except ApiToken.DoesNotExist:
        return None
    if not token.user.is_active:
        return None
    api_token_touch(token=token)
    return token.user


def error_response(error: ChatError) -> JsonResponse:
    return JsonResponse(error.as_dict(), status=error.status)


def json_body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise ChatError("invalid_json", _("The request body is not valid JSON.")) from None
    if not isinstance(body, dict):
        raise ChatError("invalid_json", _("The request body must be a JSON object."))
    return body


def api_view(methods: tuple[str, ...]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a JSON API view: bearer auth, allowed methods, errors as JSON.

    The wrapped view gets `request.user` set to the token's user and may raise ChatError.
    """

    def decorator(view: Callable[..., Any]) -> Callable[..., Any]:
        @csrf_exempt
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            try:
                raw = bearer_token(request)
                if is_skill_token(raw):  # also refused by SkillTokenScopeMiddleware
                    raise ChatError(
                        "skill_token_not_allowed",
                        _("A skill identity token only works for skill publishing."),
                        status=401,
                    )
                user = user_for_api_token(raw) if raw else None
                if user is None:
                    raise ChatError(
                        "unauthorized",
                        _("Send a valid API token: Authorization: Bearer <token>."),
                        status=401,
                    )
                request.user = user
                if request.method not in methods:
                    raise ChatError(
                        "method_not_allowed",
                        _("Method %(method)s is not allowed here.") % {"method": request.method},
                        status=405,
                    )
                return view(request, *args, **kwargs)
            except ChatError as error:
                return error_response(error)

        return wrapper

    return decorator


def conversation_for_page(request: HttpRequest, conversation_id: int) -> Conversation:
    """The signed-in user's conversation for a page or htmx view; anyone else's is a 404."""
    try:
        return conversation_get_for_user(user=request.user, conversation_id=conversation_id)
    except NotFound:
        raise Http404() from None
