"""`knowledge_reference` payloads (spec 004 "知识库引用"): validation and normalization.

A reference is the knowledge-base source behind what the assistant asks: shown under the
ask as a "Why we ask" disclosure and sent as the `knowledge_reference` event. Pure
functions over dicts (no database), like `payloads.py`; every problem is reported at once
as a `PayloadError` with a `reference.*` code.

Shape: `{"title": str, "snippet": str, "source"?: str, "url"?: http(s) URL}`. The
normalized form always has all four keys (`source` and `url` may be "").
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.utils.translation import gettext as _

from questionnaires.asks.payloads import PayloadError

KEYS = ("title", "snippet", "source", "url")
REQUIRED = ("title", "snippet")
LIMITS = {"title": 200, "snippet": 1000, "source": 200, "url": 2000}


class ReferenceInvalid(Exception):
    """The reference can't be shown; `errors` lists every problem."""

    def __init__(self, errors: list[PayloadError]) -> None:
        super().__init__("; ".join(f"{e.path}: {e.code}" for e in errors))
        self.errors = errors


def _url_ok(url: str) -> bool:
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def reference_validate(raw: object) -> dict[str, str]:
    """Return the normalized reference or raise :class:`ReferenceInvalid`."""
    if not isinstance(raw, dict):
        raise ReferenceInvalid(
            [
                PayloadError(
                    "reference.not_object",
                    "reference",
                    _("A knowledge reference must be an object with a title and a snippet."),
                )
            ]
        )
    errors: list[PayloadError] = []
    unknown = sorted(str(k) for k in raw if k not in KEYS)
    if unknown:
        errors.append(
            PayloadError(
                "reference.unknown_keys",
                "reference",
                _("Unknown keys: %(keys)s.") % {"keys": ", ".join(unknown)},
            )
        )
    result: dict[str, str] = {}
    for key in KEYS:
        value = raw.get(key)
        if value is None or value == "":
            if key in REQUIRED:
                errors.append(
                    PayloadError(
                        f"reference.{key}_required",
                        f"reference.{key}",
                        _("Give the knowledge reference a “%(key)s”.") % {"key": key},
                    )
                )
            result[key] = ""
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > LIMITS[key]:
            errors.append(
                PayloadError(
                    "reference.text_invalid",
                    f"reference.{key}",
                    _("“%(key)s” must be a non-empty string of at most %(n)s characters.")
                    % {"key": key, "n": LIMITS[key]},
                )
            )
            continue
        value = value.strip()
        if key == "url" and not _url_ok(value):
            errors.append(
                PayloadError(
                    "reference.url_invalid",
                    "reference.url",
                    _("“url” must be an http:// or https:// address."),
                )
            )
            continue
        result[key] = value
    if errors:
        raise ReferenceInvalid(errors)
    return result


def reference_or_none(raw: object) -> dict[str, str] | None:
    """The normalized reference, or None when absent or unusable (rendering never fails)."""
    if raw is None:
        return None
    try:
        return reference_validate(raw)
    except ReferenceInvalid:
        return None
