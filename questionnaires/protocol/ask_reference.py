"""``knowledge_reference`` payloads (spec 004 "知识库引用"): validation and normalization.

A reference is the knowledge-base source behind what the assistant asks: shown under the
ask as a "Why we ask" disclosure and sent as the ``knowledge_reference`` event.  Pure
functions over dicts, like ``ask_payload.py``; every problem is reported at once as a
:class:`ProtocolError` with a ``reference.*`` code and a ``reference…`` path.

Shape: ``{"title": str, "snippet": str, "source"?: str, "url"?: http(s) URL}``.  The
normalized form always has all four keys (``source`` and ``url`` may be "").
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .error_messages import make_error, type_name
from .segments import ProtocolError, ProtocolException

KEYS = ("title", "snippet", "source", "url")
REQUIRED = ("title", "snippet")
LIMITS = {"title": 200, "snippet": 1000, "source": 200, "url": 2000}


class ReferenceInvalid(ProtocolException):
    """The reference can't be shown; ``errors`` lists every problem."""


def _url_ok(url: str) -> bool:
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _checked(key: str, value: object, lang: str) -> str | ProtocolError:
    """The normalized value of one present key, or its error."""
    path = f"reference.{key}"
    if not isinstance(value, str) or not value.strip() or len(value) > LIMITS[key]:
        return make_error("reference.text_invalid", path, lang, key=key, limit=LIMITS[key])
    stripped: str = value.strip()
    if key == "url" and not _url_ok(stripped):
        return make_error("reference.url_invalid", path, lang)
    return stripped


def reference_validate(raw: object, *, lang: str = "en") -> dict[str, str]:
    """Return the normalized reference or raise :class:`ReferenceInvalid`."""
    if not isinstance(raw, dict):
        error = make_error("reference.not_object", "reference", lang, received_type=type_name(raw))
        raise ReferenceInvalid((error,))
    errors: list[ProtocolError] = []
    unknown = sorted(str(k) for k in raw if k not in KEYS)
    if unknown:
        errors.append(
            make_error("reference.unknown_keys", "reference", lang, keys=unknown, allowed=KEYS)
        )
    result: dict[str, str] = {}
    for key in KEYS:
        value = raw.get(key)
        if value is None or value == "":
            if key in REQUIRED:
                errors.append(make_error(f"reference.{key}_required", f"reference.{key}", lang))
            result[key] = ""
            continue
        checked = _checked(key, value, lang)
        if isinstance(checked, ProtocolError):
            errors.append(checked)
        else:
            result[key] = checked
    if errors:
        raise ReferenceInvalid(tuple(errors))
    return result


def reference_or_none(raw: object) -> dict[str, str] | None:
    """The normalized reference, or None when absent or unusable (rendering never fails)."""
    if raw is None:
        return None
    try:
        return reference_validate(raw)
    except ReferenceInvalid:
        return None
