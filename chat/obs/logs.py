"""Structured logs: JSON lines (`LOG_FORMAT=json`) with the ids that tie them together.

Every log line — the product's, Django's, Celery's, uvicorn's — goes through the standard
`logging` module; with `LOG_FORMAT=json` the handler's formatter is structlog's
`ProcessorFormatter`, which adds what is bound in context variables and renders one JSON
object per line:

    {"timestamp": "…Z", "level": "warning", "logger": "chat.runs.runner", "event": "…",
     "request_id": "9f…", "run_id": 12, "conversation_id": 4, "user": "a3c1…"}

`request_id`, `run_id`, `conversation_id` and `user` are on every line (null when the
line belongs to no request or run). `user` is a pseudonym: a keyed hash of the user id
(HMAC with SECRET_KEY), the same in every process, never the id or the name itself.

The request middleware binds the request's ids; a run binds its own when it starts
(chat.runs.runner) and the id of the request that asked for it travels with the Celery
task in a message header (`chat_request_id`, see `celery_connect`).

Loaded by `settings.LOGGING` before the apps: no models here.
"""

from __future__ import annotations

import functools
import logging
import re
import uuid
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar

import structlog
from django.utils.functional import empty
from structlog.contextvars import (
    bind_contextvars,
    bound_contextvars,
    clear_contextvars,
    get_contextvars,
    merge_contextvars,
)
from structlog.typing import EventDict

IDS = ("request_id", "run_id", "conversation_id", "user")
REQUEST_ID_HEADER = "X-Request-ID"
CELERY_HEADER = "chat_request_id"
# A request id a proxy sends is kept when it is plainly an id (no spaces, quotes or
# control characters to forge log lines with); anything else gets a fresh one.
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def request_id_new(incoming: str | None = None) -> str:
    if incoming and _SAFE_ID.match(incoming):
        return incoming
    return uuid.uuid4().hex


@functools.lru_cache(maxsize=8192)
def pseudonym(user_id: int | str) -> str:
    """A stable, keyed, one-way stand-in for a user id in logs (16 hex digits)."""
    from django.utils.crypto import salted_hmac

    return salted_hmac("chat.obs.user", str(user_id), algorithm="sha256").hexdigest()[:16]


def current(key: str) -> object:
    return get_contextvars().get(key)


# The request being served, for the user a line names: read when a line is written, and
# only if something already loaded the user (a log line never costs a session query).
_request: ContextVar[object | None] = ContextVar("chat_obs_request", default=None)


def request_bind(request_id: str, request: object | None = None) -> None:
    """A new request: nothing of an earlier one (on this thread) stays bound."""
    clear_contextvars()
    bind_contextvars(request_id=request_id)
    _request.set(request)


def known_user_id(request: object) -> int | None:
    """The signed-in user of `request` if it is known already: the session's once a view
    (or `login_required`) looked, an API token's once `api_view` set it."""
    user = getattr(request, "__dict__", {}).get("user")
    if user is None:
        return None
    wrapped = getattr(user, "_wrapped", user)  # django's SimpleLazyObject
    if wrapped is empty or not getattr(wrapped, "is_authenticated", False):
        return None
    pk = getattr(wrapped, "pk", None)
    return pk if isinstance(pk, int) else None


def user_bind(user_id: int | None) -> None:
    if user_id is not None:
        bind_contextvars(user=pseudonym(user_id))


def conversation_bind(conversation_id: int | None) -> None:
    if conversation_id is not None:
        bind_contextvars(conversation_id=conversation_id)


@contextmanager
def run_bound(
    *, run_id: int, conversation_id: int, user_id: int, request_id: str = ""
) -> Iterator[None]:
    """Lines logged while a run executes carry its ids; the request id is the one that
    came with the task (its header), else the one stored with the run."""
    ids: dict[str, object] = {
        "run_id": run_id,
        "conversation_id": conversation_id,
        "user": pseudonym(user_id),
    }
    if not current("request_id") and request_id:
        ids["request_id"] = request_id
    with bound_contextvars(**ids):
        yield


def _ids(_logger: object, _method: str, event: EventDict) -> EventDict:
    event.pop("color_message", None)  # uvicorn's terminal copy of the message
    if event.get("user") is None and (request := _request.get()) is not None:
        user_id = known_user_id(request)
        if user_id is not None:
            event["user"] = pseudonym(user_id)
    for key in IDS:
        event.setdefault(key, None)
    return event


def json_formatter() -> logging.Formatter:
    """The formatter of `LOG_FORMAT=json` (referenced from settings.LOGGING)."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
            structlog.stdlib.ExtraAdder(),
            _ids,
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(ensure_ascii=False, default=str),
        ],
    )


# --- Celery: the request id travels with the task ------------------------------------


def _publish(headers: MutableMapping[str, object] | None = None, **_kwargs: object) -> None:
    request_id = current("request_id")
    if headers is not None and request_id:
        headers[CELERY_HEADER] = request_id


def _prerun(task: object = None, **_kwargs: object) -> None:
    clear_contextvars()
    _request.set(None)
    request = getattr(task, "request", None)
    incoming = getattr(request, CELERY_HEADER, None) if request is not None else None
    if isinstance(incoming, str) and _SAFE_ID.match(incoming):
        bind_contextvars(request_id=incoming)


def _postrun(**_kwargs: object) -> None:
    clear_contextvars()
    _request.set(None)


def celery_connect() -> None:
    """Carry the current request id in every task message this process publishes, and
    bind it in the worker while the task runs."""
    from celery.signals import before_task_publish, task_postrun, task_prerun

    before_task_publish.connect(_publish, weak=False, dispatch_uid="chat.obs.publish")
    task_prerun.connect(_prerun, weak=False, dispatch_uid="chat.obs.prerun")
    task_postrun.connect(_postrun, weak=False, dispatch_uid="chat.obs.postrun")
