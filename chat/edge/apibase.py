"""The JSON API's machinery on django-ninja: bearer auth, the body parser, request schemas
that refuse with this project's stable codes, and the one `{"error", "message"}` shape
for everything ninja or pydantic refuses (DESIGN §6).

Each endpoint module (`chat.edge.api`, `chat.skills.api`, a kind's `api`) declares a
ninja `Router`; `chat.urls` mounts them on one `NinjaAPI` built by `api_build`, which
serves the OpenAPI 3.1 document at `/api/v1/openapi.json` and its docs page at
`/api/v1/docs` (swagger-ui from this app's own static files, within the CSP).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Self, TypeAlias

from django.contrib.auth.models import User
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from django.http.request import RawPostDataException
from django.utils.translation import gettext as _
from ninja import NinjaAPI, Router, Schema
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.openapi.docs import Swagger
from ninja.openapi.schema import OpenAPISchema
from ninja.operation import Operation
from ninja.params import functions as param
from ninja.parser import Parser
from ninja.security.http import HttpAuthBase
from pydantic import ConfigDict, ModelWrapValidatorHandler, ValidationError, model_validator
from pydantic import JsonValue as PydanticJson
from pydantic_core import ErrorDetails

from chat.core.errors import ChatError, NotFound
from chat.core.identity import is_skill_token
from chat.edge.http import (
    InvalidId,
    bad_token_strike,
    bearer_token,
    client_address,
    error_response,
    json_body,
    request_check,
    too_large,
    user_for_api_token,
)
from questionnaires.protocol.jsontypes import JsonValue

MAX_ID = 2**63 - 1
# A JSON value in a schema (pydantic's: validates and documents as any JSON).
ApiJson: TypeAlias = PydanticJson
ConversationId = Annotated[
    int, param.Path(..., ge=0, le=MAX_ID, description="The conversation's id.")
]


class ErrorOut(Schema):
    """Every refusal: a stable machine code, a message in the client's language, and for
    some codes `details` (e.g. `details.errors`: every problem, each with its `path`)."""

    error: str
    message: str
    details: dict[str, ApiJson] | None = None


# What each status means on every endpoint (a refusal always has the ErrorOut shape).
_STATUS_TEXT = {
    400: "Refused input: `invalid_json`, `json_too_deep`, `text_invalid`, `invalid_field`, "
    "`invalid_id` or the endpoint's own codes",
    401: "`unauthorized` (missing or invalid token) or `skill_token_not_allowed`",
    404: "`not_found`: no such object, or another user's",
    405: "`method_not_allowed`",
    409: "`pending_interactive_form` and other conflicts with the conversation's state",
    413: "`request_too_large`, `message_too_long` and other size limits",
    415: "`unsupported_media_type` and the endpoint's own media codes",
    429: "`too_many_attempts` (too many invalid tokens from this address: wait `Retry-After` "
    "seconds) or `too_many_streams`",
    503: "`stream_overloaded` (wait `Retry-After` seconds)",
}
COMMON = (400, 401, 404, 405, 413, 415, 429)


def errors(*extra: int) -> dict[int, type[ErrorOut]]:
    """The refusals an endpoint may answer with (the common ones and `extra`)."""
    return dict.fromkeys(sorted({*COMMON, *extra}), ErrorOut)


def error_descriptions(*extra: int) -> dict[str, dict[int, dict[str, str]]]:
    """`openapi_extra` that names what each refusal status means."""
    return {
        "responses": {
            status: {"description": _STATUS_TEXT[status]} for status in sorted({*COMMON, *extra})
        }
    }


# --- request schemas -------------------------------------------------------------------


def _path(location: Sequence[int | str]) -> str:
    path = "$"
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _field_name(location: Sequence[int | str]) -> str:
    names = [str(p) for p in location if isinstance(p, str)]
    return names[0] if names else "body"


def _message(error: ErrorDetails) -> str:
    """One pydantic error in the client's language (pydantic's own texts are English)."""
    name = _field_name(error["loc"])
    kind = error["type"]
    context = error.get("ctx") or {}
    values = {"field": name}
    if kind == "missing":
        return _("“%(field)s” is required.") % values
    if kind in ("string_type", "string_unicode"):
        return _("“%(field)s” must be a string.") % values
    if kind in ("bool_type", "bool_parsing"):
        return _("“%(field)s” must be true or false.") % values
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return _("“%(field)s” must be a whole number.") % values
    if kind == "list_type":
        return _("“%(field)s” must be a list.") % values
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return _("“%(field)s” must be an object.") % values
    if kind in ("literal_error", "enum"):
        return _("“%(field)s” must be one of: %(choices)s.") % {
            **values,
            "choices": str(context.get("expected", "")).replace("'", ""),
        }
    if kind in ("string_too_long", "too_long"):
        return _("“%(field)s” is too long (%(limit)s at most).") % {
            **values,
            "limit": context.get("max_length", ""),
        }
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return _("“%(field)s” is out of range.") % values
    return _("“%(field)s” is not valid.") % values


def refusal_from(
    problems: Iterable[ErrorDetails],
    *,
    code: str = "invalid_field",
    field_codes: Mapping[str, str] | None = None,
) -> ChatError:
    """A pydantic refusal as one ChatError: the first problem's code and message, and
    every problem (`code`, `path`, `message`) in `details.errors`."""
    listed: list[JsonValue] = []
    first_code = ""
    first_message = ""
    for problem in problems:
        location = tuple(problem["loc"])
        message = _message(problem)
        if not first_message:
            first_code = (field_codes or {}).get(_field_name(location), code)
            first_message = message
        listed.append({"code": problem["type"], "path": _path(location), "message": message})
    if not first_message:
        first_code, first_message = code, _("The request is not valid.")
    return ChatError(first_code, first_message, details={"errors": listed})


class RequestSchema(Schema):
    """A request body: strict JSON types (no "yes" for true, no 5 for "5"), unknown
    fields ignored. Any problem is a ChatError with `refusal_code` (or the field's own
    code in `field_codes`), raised from validation so ninja answers it like any other."""

    model_config = ConfigDict(strict=True, extra="ignore")
    refusal_code: ClassVar[str] = "invalid_field"
    field_codes: ClassVar[dict[str, str]] = {}

    @model_validator(mode="wrap")
    @classmethod
    def _refuse_with_codes(cls, data: object, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if not isinstance(data, dict) and not isinstance(data, cls):
            raise ChatError("invalid_json", _("The request body must be a JSON object."))
        try:
            return handler(data)
        except ValidationError as error:
            raise refusal_from(
                error.errors(include_url=False),
                code=cls.refusal_code,
                field_codes=cls.field_codes,
            ) from None


# --- authentication ----------------------------------------------------------------------


class BearerAuth(HttpAuthBase):
    """`Authorization: Bearer <token>` as the OpenAPI document names it."""

    openapi_type = "http"
    openapi_scheme = "bearer"


class ApiTokenAuth(BearerAuth):
    """A user's API token (`create_api_token`): a run's skill token is 401
    `skill_token_not_allowed`; a missing or wrong one 401 `unauthorized`, and 429
    `too_many_attempts` past BAD_TOKEN_LIMIT_PER_MINUTE from one address (a valid
    token is checked first and always served). Then the body is checked as before
    any view reads it (`request_check`)."""

    def __call__(self, request: HttpRequest) -> User:
        raw = bearer_token(request)
        if is_skill_token(raw):
            raise ChatError(
                "skill_token_not_allowed",
                _("A skill identity token only works for skill publishing."),
                status=401,
            )
        user = user_for_api_token(raw) if raw else None
        if user is None:
            raise bad_token_strike(client_address(request))
        request.user = user
        request_check(request)
        return user


class JsonObjectParser(Parser):
    """Bodies through `json_body`: its codes (413 `request_too_large`, 400
    `invalid_json`, `json_too_deep`, `text_invalid`) reach the client unchanged."""

    def parse_body(self, request: HttpRequest) -> dict[str, object]:
        try:
            return dict(json_body(request))
        except RawPostDataException:  # a multipart body, already read as a form
            raise unsupported_media_type() from None


def unsupported_media_type() -> ChatError:
    return ChatError(
        "unsupported_media_type",
        _("Send the body as JSON (Content-Type: application/json)."),
        status=415,
    )


# --- the API -----------------------------------------------------------------------------

DESCRIPTION = """The chat's JSON API for external agent runtimes.

`Authorization: Bearer <token>`: `python manage.py create_api_token USERNAME` prints one.
Every refusal is `{"error": code, "message": text}` (and sometimes `details`) with a 4xx
status; the codes are stable, the messages are in the request's language
(`Accept-Language`: en or zh-Hans). Another user's conversation is a 404. Ids are ASCII
digits up to 2^63 - 1.
"""


# Handlers take `object`: ninja types them as receiving an exception or its class.


def _chat_error(request: HttpRequest, exc: object) -> HttpResponse:
    return error_response(exc if isinstance(exc, ChatError) else NotFound())


def _validation_error(request: HttpRequest, exc: object) -> HttpResponse:
    """Path, query or body validation that no RequestSchema answered itself."""
    found = exc.errors if isinstance(exc, NinjaValidationError) else []
    problems: list[ErrorDetails] = [e for e in found if isinstance(e, dict)]  # type: ignore[misc]
    in_path = [p for p in problems if tuple(p["loc"])[:1] == ("path",)]
    if in_path:  # an id the URL converter let through but the schema's range refuses
        return error_response(InvalidId(str(in_path[0]["loc"][-1])))
    if any(p["loc"][:1] == ("body",) and len(p["loc"]) <= 2 for p in problems):
        # the whole body is missing (empty) or not an object
        return error_response(
            ChatError("invalid_json", _("The request body must be a JSON object."))
        )
    # a query or header parameter: its name, as `query.name` in the listed paths
    named: list[ErrorDetails] = [{**p, "loc": tuple(p["loc"])[1:]} for p in problems]
    refused = refusal_from(named)
    listed = refused.details.get("errors")
    if isinstance(listed, list):
        for entry, problem in zip(listed, problems, strict=False):
            if isinstance(entry, dict):
                entry["path"] = ".".join(str(part) for part in problem["loc"])
    return error_response(refused)


def _http_error(request: HttpRequest, exc: object) -> HttpResponse:
    cause = exc.__cause__ if isinstance(exc, HttpError) else None
    if isinstance(cause, ChatError):  # raised by JsonObjectParser
        return error_response(cause)
    status = exc.status_code if isinstance(exc, HttpError) else 400
    return error_response(
        ChatError("bad_request", _("The request could not be understood."), status=status)
    )


def _too_large(request: HttpRequest, exc: object) -> HttpResponse:
    return error_response(too_large())


def _read_as_form(request: HttpRequest, exc: object) -> HttpResponse:
    """A multipart body was read as a form (by the auth's checks): it isn't JSON."""
    return error_response(unsupported_media_type())


def _not_found(request: HttpRequest, exc: object) -> HttpResponse:
    return error_response(NotFound())


def _unauthorized(request: HttpRequest, exc: object) -> HttpResponse:
    return error_response(bad_token_strike(client_address(request)))


class ChatApi(NinjaAPI):
    """The NinjaAPI whose OpenAPI document generated clients take unedited.

    ninja writes an optional body's Python default (`body: X = EMPTY`) into the document
    as a body-level `default` beside an `allOf` wrapping the body's `$ref`. OpenAPI gives
    that no meaning (`required: false` already says the body may be absent), and
    openapi-python-client refuses the operation ("ModelProperty cannot have a default
    value") — so every request body is described by its plain `$ref`.

    A request schema's property with a `default` is one a client may leave out, but
    openapi-typescript (default options) types every property with a default as always
    present, so a client would have to send all of them. In the schemas of request bodies
    the default moves into the description ("Default: `external`."), which every
    generator reads as an optional property.
    """

    def get_openapi_operation_id(self, operation: Operation) -> str:
        """The view's own name (`conversation_create`), which generated clients use as
        the method's name; ninja's default prefixes the module path."""
        return operation.view_func.__name__

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, object] | None = None
    ) -> OpenAPISchema:
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        bodies: set[str] = set()
        for path in schema.get("paths", {}).values():
            for operation in path.values():
                content = (operation.get("requestBody") or {}).get("content", {})
                for media in content.values():
                    media["schema"] = _plain_body_schema(media.get("schema", {}))
                    bodies.add(str(media["schema"].get("$ref", "")).rpartition("/")[2])
        components = schema.get("components", {}).get("schemas", {})
        for name in bodies & set(components):
            _defaults_described(components[name])
        return schema


def _plain_body_schema(body: dict[str, object]) -> dict[str, object]:
    """`{"allOf": [{"$ref": R}], "default": …}` → `{"$ref": R}`; anything else as it is."""
    wrapped = body.get("allOf")
    if isinstance(wrapped, list) and len(wrapped) == 1 and set(body) <= {"allOf", "default"}:
        only = wrapped[0]
        if isinstance(only, dict) and set(only) == {"$ref"}:
            return dict(only)
    return {key: value for key, value in body.items() if key != "default"}


def _defaults_described(body: dict[str, Any]) -> None:
    """Each property's `default` said in its description instead (see `ChatApi`)."""
    for prop in (body.get("properties") or {}).values():
        if isinstance(prop, dict) and "default" in prop:
            default = json.dumps(prop.pop("default"), ensure_ascii=False)
            said = f"Default: `{default}`."
            prop["description"] = (
                f"{prop['description']} {said}" if prop.get("description") else said
            )


class ApiDocs(Swagger):
    """Swagger UI from ninja's bundled files, under the product's bar with the way back to
    the chat (templates/chat/api_docs.html)."""

    template = "chat/api_docs.html"


def api_build(routers: Iterable[Router], *, version: str) -> NinjaAPI:
    """One NinjaAPI with `routers` mounted at its root (namespace "api")."""
    api = ChatApi(
        title="Inline-questionnaire chat API",
        version=version,
        description=DESCRIPTION,
        urls_namespace="api",
        parser=JsonObjectParser(),
        docs=ApiDocs(settings={"persistAuthorization": False, "tryItOutEnabled": False}),
        docs_url="/docs",
        openapi_url="/openapi.json",
    )
    api.add_exception_handler(ChatError, _chat_error)
    api.add_exception_handler(NinjaValidationError, _validation_error)
    api.add_exception_handler(HttpError, _http_error)
    api.add_exception_handler(Http404, _not_found)
    api.add_exception_handler(RequestDataTooBig, _too_large)
    api.add_exception_handler(RawPostDataException, _read_as_form)
    api.add_exception_handler(AuthenticationError, _unauthorized)
    for router in routers:
        api.add_router("", router)
    return api
