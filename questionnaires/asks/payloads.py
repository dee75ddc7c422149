"""`ask_user_options` payloads (spec 004): validation, normalization, widget choice.

Pure functions over dicts (no database). A payload is validated once, when the ask is
created; what is stored and rendered is the normalized form, so a widget never meets a
shape it does not know. Every problem is reported at once as `(code, path, message)`.

Types: `options` (the spec's shape; the default when `type` is absent), `scale`
(`min`/`max`/`step`, `min_label`/`max_label`), `boolean` (`true_label`/`false_label`) and
`free_text_only`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

from django.utils.translation import gettext as _

from chat.core.metadata import AskOption, AskPayload

TYPES = ("options", "scale", "boolean", "free_text_only")
MAX_OPTIONS = 50
MAX_TEXT = 500
FIELD_CHARS = 100
BUTTONS_MAX = 5  # 2–5 options are buttons, 6+ a dropdown (spec 004 "设计要点")


@dataclass(frozen=True)
class PayloadError:
    code: str
    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


class AskInvalid(Exception):
    """The payload can't be rendered; `errors` lists every problem."""

    def __init__(self, errors: list[PayloadError]) -> None:
        super().__init__("; ".join(f"{e.path}: {e.code}" for e in errors))
        self.errors = errors


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip()) and len(value) <= MAX_TEXT


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class _Checker:
    def __init__(self) -> None:
        self.errors: list[PayloadError] = []

    def error(self, code: str, path: str, message: str) -> None:
        self.errors.append(PayloadError(f"ask.{code}", path, message))

    def optional_text(self, payload: dict[str, Any], key: str) -> str:
        value = payload.get(key)
        if value is None or value == "":
            return ""
        if not _text(value):
            self.error("text_invalid", key, _("“%(key)s” must be a short string.") % {"key": key})
            return ""
        return str(value).strip()

    def options(self, raw: Any) -> list[dict[str, Any]]:
        if not isinstance(raw, list) or len(raw) < 2:
            self.error("options_too_few", "options", _("“options” must list at least two choices."))
            return []
        if len(raw) > MAX_OPTIONS:
            self.error(
                "options_too_many",
                "options",
                _("At most %(n)s options are allowed.") % {"n": MAX_OPTIONS},
            )
            return []
        result: list[dict[str, Any]] = []
        seen: set[str] = set()
        for index, item in enumerate(raw, start=1):
            path = f"options[{index}]"
            if not isinstance(item, dict):
                self.error("option_not_object", path, _("Each option must be an object."))
                continue
            label, value, icon = item.get("label"), item.get("value"), item.get("icon", "")
            if not _text(label):
                self.error(
                    "option_label_required", f"{path}.label", _("Give every option a label.")
                )
                continue
            if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
                self.error(
                    "option_value_invalid",
                    f"{path}.value",
                    _("An option value must be a non-empty string or a number."),
                )
                continue
            if icon is not None and not isinstance(icon, str):
                self.error("option_icon_invalid", f"{path}.icon", _("“icon” must be a string."))
                continue
            if str(value) in seen:
                self.error(
                    "option_value_duplicate",
                    f"{path}.value",
                    _("Option values must be unique."),
                )
                continue
            seen.add(str(value))
            synonyms = item.get("synonyms") or []
            if not isinstance(synonyms, list) or not all(_text(s) for s in synonyms):
                self.error(
                    "option_synonyms_invalid",
                    f"{path}.synonyms",
                    _("“synonyms” must be a list of strings."),
                )
                synonyms = []
            result.append(
                {
                    "label": str(label).strip(),
                    "value": value,
                    "icon": str(icon or "")[:16],
                    "synonyms": [s.strip() for s in synonyms],
                }
            )
        return result

    def scale(self, payload: dict[str, Any]) -> dict[str, Any]:
        low, high, step = payload.get("min", 1), payload.get("max", 10), payload.get("step", 1)
        if not (_number(low) and _number(high) and _number(step)):
            self.error("scale_invalid", "min", _("“min”, “max” and “step” must be numbers."))
            return {}
        if low >= high or step <= 0 or (high - low) / step > 1000:
            self.error(
                "scale_range_invalid",
                "max",
                _("The scale needs min < max and a positive step (at most 1000 steps)."),
            )
            return {}
        return {
            "min": low,
            "max": high,
            "step": step,
            "min_label": self.optional_text(payload, "min_label"),
            "max_label": self.optional_text(payload, "max_label"),
        }


def ask_validate(payload: object) -> AskPayload:
    """Return the normalized payload or raise :class:`AskInvalid` with every problem."""
    check = _Checker()
    if not isinstance(payload, dict):
        raise AskInvalid(
            [PayloadError("ask.payload_not_object", "", _("The payload must be an object."))]
        )
    kind = payload.get("type", "options")
    if kind not in TYPES:
        check.error(
            "type_invalid",
            "type",
            _("“type” must be one of: %(types)s.") % {"types": ", ".join(TYPES)},
        )
    question, field = payload.get("question"), payload.get("field")
    if not _text(question):
        check.error("question_required", "question", _("Give the ask a question."))
    if not isinstance(field, str) or not field.strip() or len(field) > FIELD_CHARS:
        check.error("field_required", "field", _("Name the state field the answer fills."))
    # Spec 004: free input ("Other") is offered unless the payload turns it off; a scale
    # takes numbers in its range only, so it offers none unless asked to.
    allow = payload.get("allow_free_text", kind != "scale")
    if not isinstance(allow, bool):
        check.error("allow_free_text_invalid", "allow_free_text", _("Must be true or false."))
        allow = False
    result: dict[str, Any] = {
        "type": kind,
        "question": question.strip() if isinstance(question, str) else "",
        "field": field.strip() if isinstance(field, str) else "",
        "options": [],
        "allow_free_text": allow or kind == "free_text_only",
        "free_text_placeholder": check.optional_text(payload, "free_text_placeholder"),
    }
    if kind == "options":
        result["options"] = check.options(payload.get("options"))
    elif kind == "scale":
        result.update(check.scale(payload))
    elif kind == "boolean":
        true_label = check.optional_text(payload, "true_label") or _("Yes")
        false_label = check.optional_text(payload, "false_label") or _("No")
        # Keep the labels in the normalized payload: re-validating it must be a no-op.
        result.update(true_label=true_label, false_label=false_label)
        result["options"] = [
            {"label": true_label, "value": True, "icon": "", "synonyms": []},
            {"label": false_label, "value": False, "icon": "", "synonyms": []},
        ]
    if check.errors:
        raise AskInvalid(check.errors)
    return cast(AskPayload, result)  # every key checked and normalized above


def ask_widget(ask: AskPayload) -> str:
    """Which widget renders the (normalized) ask: the table in spec 004 §2."""
    kind = ask["type"]
    if kind == "options":
        return "buttons" if len(ask["options"]) <= BUTTONS_MAX else "dropdown"
    return {"scale": "slider", "boolean": "boolean", "free_text_only": "free_text"}[kind]


def option_for_value(ask: AskPayload, value: object) -> AskOption | None:
    """The offered option whose value equals `value` (form posts send strings)."""
    for option in ask["options"]:
        if option["value"] == value or _form_value(option["value"]) == value:
            return option
    return None


def _form_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def scale_value(ask: AskPayload, value: object) -> int | float | None:
    """`value` as a number on the ask's scale (snapped to a step), or None if outside."""
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
    return _form_value(value)
