"""Errors with localized messages: ``make_error(code, path, lang, **details)``.

The code is the contract; the message is for people and models.  Its template comes
from the language's catalog (``catalogs/``), its fields from the error's ``details``,
each shown short and quoted (``_show``).  The full code table is in ``README.md``.
(Named ``error_messages`` so it is never confused with the chat's ``Message`` model.)
"""

from __future__ import annotations

import json
import math
from typing import Any

from .catalogs import is_zh, template, text
from .limits import SHOWN_CHARS, SHOWN_ITEMS
from .segments import ProtocolError

__all__ = ["is_zh", "make_error", "render", "type_name"]


# Details shown verbatim; every other string detail is quoted so blanks stay visible.
_PLAIN_KEYS = frozenset(
    {
        "expected",
        "type",
        "name",
        "open",
        "close",
        "received_type",
        "reason",
        "problem",
        "allowed",
        "attributes",
    }
)


def _show(value: Any, lang: str, plain: bool) -> str:
    """``value`` for a message: lists and strings are clipped (``limits.SHOWN_*``), so
    a message never grows with the input; ``details`` keep the full value."""
    if isinstance(value, list | tuple):
        shown = ", ".join(_scalar(v, lang, plain) for v in value[:SHOWN_ITEMS]) or "—"
        more = len(value) - SHOWN_ITEMS
        return f"{shown}, … (+{more})" if more > 0 else shown
    return _scalar(value, lang, plain)


def _scalar(value: Any, lang: str, plain: bool) -> str:
    """One value; a nested list or object is named by its type, never recursed into."""
    if isinstance(value, str):
        clipped = value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "…"
        if plain:  # shown verbatim; English words the validators wrote are translated
            return template(f"detail.{clipped}", lang) or clipped
        return json.dumps(clipped, ensure_ascii=False)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float) or (isinstance(value, int) and -(10**15) < value < 10**15):
        return str(value)
    return type_name(value)  # huge ints (str() may refuse them), lists, objects


def render(code: str, details: dict[str, Any], lang: str) -> str:
    """The localized message for ``code`` with ``details`` filled in."""
    return text(code, lang, **{k: _show(v, lang, k in _PLAIN_KEYS) for k, v in details.items()})


def make_error(code: str, path: str, lang: str, **details: Any) -> ProtocolError:
    """Build a :class:`ProtocolError` with its localized message.

    ``details`` are made JSON-safe and shallow first: a nested list or object (however
    deep the input was) becomes ``"<array>"``/``"<object>"``, an integer too big for
    ``json.dumps`` ``"<number>"``, so serializing an error never recurses or fails.
    """
    safe = {key: _safe_detail(value) for key, value in details.items()}
    return ProtocolError(code=code, path=path, message=render(code, safe, lang), details=safe)


def _safe_detail(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_safe_scalar(item) for item in value]
    return _safe_scalar(value)


def _safe_scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if -(2**63) < value < 2**63 else "<number>"
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    return f"<{type_name(value)}>"


def type_name(value: Any) -> str:
    """A JSON-ish name for the type of ``value`` (used in ``received_type``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
