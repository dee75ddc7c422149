"""``ask_user_options`` payloads (spec 004): validation, normalization, widget choice.

Pure functions over dicts.  A payload is validated once, when the ask is created; what
is stored and rendered is the normalized form, so a widget never meets a shape it does
not know.  Every problem is reported at once as a :class:`ProtocolError` with an
``ask.*`` code (README, "Structured asks"); messages and the default yes/no labels come
from the catalog of ``lang``.

Types: ``options`` (the spec's shape; the default when ``type`` is absent), ``scale``
(``min``/``max``/``step``, ``min_label``/``max_label``), ``boolean``
(``true_label``/``false_label``) and ``free_text_only``.
"""

from __future__ import annotations

import math
from typing import Any, Literal, NotRequired, TypedDict, cast

from .catalogs import text
from .error_messages import make_error, type_name
from .jsontypes import Json
from .segments import ProtocolError, ProtocolException

TYPES = ("options", "scale", "boolean", "free_text_only")
MAX_OPTIONS = 50
MAX_TEXT = 500
FIELD_CHARS = 100
MAX_STEPS = 1000
BUTTONS_MAX = 5  # 2–5 options are buttons, 6+ a dropdown (spec 004 "设计要点")


class AskOption(TypedDict):
    label: str
    value: Json
    icon: NotRequired[str]
    synonyms: NotRequired[list[str]]


class AskPayload(TypedDict, total=False):
    """A normalized spec-004 ``ask_user_options`` payload (what ``ask_validate`` returns,
    what ``Message.metadata["ask_user_options"]`` holds)."""

    type: Literal["options", "scale", "boolean", "free_text_only"]
    question: str
    field: str
    options: list[AskOption]
    allow_free_text: bool
    free_text_placeholder: str
    min: float
    max: float
    step: float
    min_label: str
    max_label: str
    true_label: str
    false_label: str


class AskInvalid(ProtocolException):
    """The payload can't be rendered; ``errors`` lists every problem."""


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip()) and len(value) <= MAX_TEXT


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class _Checker:
    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.errors: list[ProtocolError] = []

    def error(self, code: str, path: str, **details: Any) -> None:
        self.errors.append(make_error(f"ask.{code}", path, self.lang, **details))

    def optional_text(self, payload: dict[str, Any], key: str) -> str:
        value = payload.get(key)
        if value is None or value == "":
            return ""
        if not _text(value):
            self.error("text_invalid", key, key=key, limit=MAX_TEXT)
            return ""
        return str(value).strip()

    def options(self, raw: Any) -> list[dict[str, Any]]:
        if not isinstance(raw, list) or len(raw) < 2:
            self.error("options_too_few", "options")
            return []
        if len(raw) > MAX_OPTIONS:
            self.error("options_too_many", "options", count=len(raw), limit=MAX_OPTIONS)
            return []
        result: list[dict[str, Any]] = []
        seen: dict[str, int] = {}
        for index, item in enumerate(raw, start=1):
            option = self.option(item, f"options[{index}]", index, seen)
            if option is not None:
                result.append(option)
        return result

    def option(
        self, item: Any, path: str, index: int, seen: dict[str, int]
    ) -> dict[str, Any] | None:
        if not isinstance(item, dict):
            self.error("option_not_object", path, received_type=type_name(item))
            return None
        label, value, icon = item.get("label"), item.get("value"), item.get("icon", "")
        if not isinstance(label, str) or not _text(label):
            self.error("option_label_required", f"{path}.label", limit=MAX_TEXT)
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
            self.error("option_value_invalid", f"{path}.value")
            return None
        if icon is not None and not isinstance(icon, str):
            self.error("option_icon_invalid", f"{path}.icon")
            return None
        if str(value) in seen:
            self.error(
                "option_value_duplicate", f"{path}.value", value=value, first_index=seen[str(value)]
            )
            return None
        seen[str(value)] = index
        synonyms = item.get("synonyms") or []
        if not isinstance(synonyms, list) or not all(_text(s) for s in synonyms):
            self.error("option_synonyms_invalid", f"{path}.synonyms")
            synonyms = []
        return {
            "label": label.strip(),
            "value": value,
            "icon": str(icon or "")[:16],
            "synonyms": [s.strip() for s in synonyms],
        }

    def typed(self, kind: Any, payload: dict[str, Any]) -> dict[str, Any]:
        """The fields of the ask's ``type``."""
        if kind == "options":
            return {"options": self.options(payload.get("options"))}
        if kind == "scale":
            return self.scale(payload)
        if kind != "boolean":
            return {}
        true_label = self.optional_text(payload, "true_label") or text("text.yes", self.lang)
        false_label = self.optional_text(payload, "false_label") or text("text.no", self.lang)
        # Keep the labels in the normalized payload: re-validating it must be a no-op.
        return {
            "true_label": true_label,
            "false_label": false_label,
            "options": [
                {"label": true_label, "value": True, "icon": "", "synonyms": []},
                {"label": false_label, "value": False, "icon": "", "synonyms": []},
            ],
        }

    def scale(self, payload: dict[str, Any]) -> dict[str, Any]:
        low, high, step = payload.get("min", 1), payload.get("max", 10), payload.get("step", 1)
        if not (_number(low) and _number(high) and _number(step)):
            self.error("scale_invalid", "min")
            return {}
        if low >= high or step <= 0 or (high - low) / step > MAX_STEPS:
            self.error("scale_range_invalid", "max", limit=MAX_STEPS)
            return {}
        return {
            "min": low,
            "max": high,
            "step": step,
            "min_label": self.optional_text(payload, "min_label"),
            "max_label": self.optional_text(payload, "max_label"),
        }


def ask_validate(payload: object, *, lang: str = "en") -> AskPayload:
    """Return the normalized payload or raise :class:`AskInvalid` with every problem.

    ``lang`` is the language of the messages and of a yes/no ask's default labels (the
    conversation's language: the person reads them)."""
    check = _Checker(lang)
    if not isinstance(payload, dict):
        check.error("payload_not_object", "", received_type=type_name(payload))
        raise AskInvalid(tuple(check.errors))
    kind = payload.get("type", "options")
    if kind not in TYPES:
        check.error("type_invalid", "type", value=kind, allowed=list(TYPES))
    question, field = payload.get("question"), payload.get("field")
    if not _text(question):
        check.error("question_required", "question", limit=MAX_TEXT)
    if not isinstance(field, str) or not field.strip() or len(field) > FIELD_CHARS:
        check.error("field_required", "field", limit=FIELD_CHARS)
    # Spec 004: free input ("Other") is offered unless the payload turns it off; a scale
    # takes numbers in its range only, so it offers none unless asked to.
    allow = payload.get("allow_free_text", kind != "scale")
    if not isinstance(allow, bool):
        check.error("allow_free_text_invalid", "allow_free_text", received_type=type_name(allow))
        allow = False
    result: dict[str, Any] = {
        "type": kind,
        "question": question.strip() if isinstance(question, str) else "",
        "field": field.strip() if isinstance(field, str) else "",
        "options": [],
        "allow_free_text": allow or kind == "free_text_only",
        "free_text_placeholder": check.optional_text(payload, "free_text_placeholder"),
    }
    result.update(check.typed(kind, payload))
    if check.errors:
        raise AskInvalid(tuple(check.errors))
    return cast(AskPayload, result)  # every key checked and normalized above


def ask_widget(ask: AskPayload) -> str:
    """Which widget renders the (normalized) ask: the table in spec 004 §2."""
    kind = ask["type"]
    if kind == "options":
        return "buttons" if len(ask["options"]) <= BUTTONS_MAX else "dropdown"
    return {"scale": "slider", "boolean": "boolean", "free_text_only": "free_text"}[kind]


def option_for_value(ask: AskPayload, value: object) -> AskOption | None:
    """The offered option whose value equals ``value`` (form posts send strings)."""
    for option in ask["options"]:
        if option["value"] == value or form_value(option["value"]) == value:
            return option
    return None


def scale_value(ask: AskPayload, value: object) -> int | float | None:
    """``value`` as a number on the ask's scale (snapped to a step), or None if outside."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not _number(value):
        return None
    low, high, step = ask["min"], ask["max"], ask["step"]
    if not low <= value <= high:
        return None
    snapped = low + round((value - low) / step) * step
    return int(snapped) if float(snapped).is_integer() else round(snapped, 6)


def form_value(value: object) -> str:
    """How a value travels in an HTML form (booleans as true/false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
