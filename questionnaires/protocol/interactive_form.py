"""The ``interactive_form_question`` tool (spec 003): lenient normalization, then strict
validation. The check of a user's answers against the normalized questions is
``interactive_form_answers.py``.

Pure Python (standard library only).  Two steps, kept apart so each is easy to read:

1. **Lenient aliases** — what models tend to write is mapped onto one shape:
   ``title``/``text``/``prompt``/``label`` for ``question``; ``type``/``inputType`` for
   ``input_type``; type aliases (``single_select``, ``radio``, ``dropdown`` → single
   choice; ``checkbox``, ``multiple_choice``, ``multi_select`` → multiple choice;
   ``textarea``, ``long_text`` → multi-line text; …); string or number options →
   ``{label, value}``; ``multiSelect``/``multiple`` for ``multi_select``.  A missing
   ``input_type`` is inferred (options present → choice, otherwise text); a missing
   ``id`` becomes ``q<n>``.
2. **Strict validation** — non-empty ``questions``; ids non-blank and unique; non-empty
   question text; choice questions need options, text questions have none; option
   values non-blank and unique; defaults must be option values; booleans are booleans.
   The caps of ``limits.py`` (questions, options, text lengths) are checked before items
   are looked at one by one; every membership test is a dict or set look-up.

Errors accumulate (every problem is reported at once, so a model can fix them all in one
retry) as ``{"code", "path", "message"}`` dicts.  Paths are **1-based** like
``questionnaire_async``'s: ``questions``, ``questions[2]``, ``questions[2].id``,
``questions[2].options[3]``, ``questions[2].default``.  Codes are
``interactive_form.<suffix>``; answer errors (:func:`validate_form_answers`) are
``interactive_form.answer.<suffix>`` with paths ``answers.<question id>``.

Normalized question (what ``render_payload.questions`` holds)::

    {"id": "q1", "question": "…", "input_type": "choice" | "text",
     "options": [{"label": "…", "value": "…"}],   # [] for text
     "multi_select": bool,                          # False for text
     "multiline": bool,                             # text only: textarea vs input
     "required": bool, "default": str | list[str] | None, "placeholder": str}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .catalogs import text
from .error_messages import type_name
from .limits import (
    MAX_ID_CHARS,
    MAX_OPTION_CHARS,
    MAX_OPTIONS,
    MAX_QUESTIONS,
    MAX_TEXT_CHARS,
    SHOWN_CHARS,
    SHOWN_ITEMS,
)

PREFIX = "interactive_form"

QUESTION_TEXT_KEYS = ("question", "title", "text", "prompt", "label")
INPUT_TYPE_KEYS = ("input_type", "inputType", "type")
MULTI_KEYS = ("multi_select", "multiSelect", "multiple", "allow_multiple")

# alias -> (input_type, implied multi_select or None, implied multiline)
TYPE_ALIASES: dict[str, tuple[str, bool | None, bool]] = {
    "choice": ("choice", None, False),
    "select": ("choice", None, False),
    "options": ("choice", None, False),
    "single_select": ("choice", False, False),
    "single_choice": ("choice", False, False),
    "single": ("choice", False, False),
    "radio": ("choice", False, False),
    "dropdown": ("choice", False, False),
    "multi_select": ("choice", True, False),
    "multiselect": ("choice", True, False),
    "multiple_select": ("choice", True, False),
    "multiple_choice": ("choice", True, False),
    "multi_choice": ("choice", True, False),
    "multi": ("choice", True, False),
    "checkbox": ("choice", True, False),
    "checkboxes": ("choice", True, False),
    "text": ("text", None, False),
    "input": ("text", None, False),
    "string": ("text", None, False),
    "short_text": ("text", None, False),
    "free_text": ("text", None, False),
    "textarea": ("text", None, True),
    "long_text": ("text", None, True),
    "paragraph": ("text", None, True),
    "multiline": ("text", None, True),
}


@dataclass(frozen=True)
class FormNormalization:
    """The outcome of :func:`normalize_interactive_form`: questions or errors, never both."""

    questions: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


_received = type_name


def _allowed(values: list[str]) -> str:
    """The option values quoted in a message: the first ``SHOWN_ITEMS`` of them."""
    shown = ", ".join(_show(v) for v in values[:SHOWN_ITEMS])
    more = len(values) - SHOWN_ITEMS
    return f"{shown}, … (+{more})" if more > 0 else shown


def _show(value: Any) -> str:
    """A value quoted in a message, clipped so messages never grow with the input."""
    if isinstance(value, str):
        return f"“{value[:SHOWN_CHARS]}…”" if len(value) > SHOWN_CHARS else f"“{value}”"
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return repr(value)
    if isinstance(value, int) and -(10**15) < value < 10**15:
        return repr(value)
    return _received(value)


class _Errors:
    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.items: list[dict[str, str]] = []

    def add(self, suffix: str, path: str, **details: Any) -> None:
        if "expected" in details:
            details["expected"] = text(f"{PREFIX}.expected.{details['expected']}", self.lang)
        message = text(f"{PREFIX}.{suffix}", self.lang, **{k: str(v) for k, v in details.items()})
        self.items.append({"code": f"{PREFIX}.{suffix}", "path": path, "message": message})

    def fits(self, value: str, limit: int, path: str) -> bool:
        """False (and ``text_too_long``) when ``value`` is longer than ``limit``."""
        if len(value) <= limit:
            return True
        self.add("text_too_long", path, length=len(value), limit=limit)
        return False


def normalize_interactive_form(arguments: Any, *, lang: str = "en") -> FormNormalization:
    """Normalize ``interactive_form_question`` arguments ``{"questions": [...]}``.

    Never raises, whatever ``arguments`` is.  ``lang`` picks the message language
    (``en`` or ``zh…``); codes and paths don't depend on it.
    """
    errors = _Errors(lang)
    if not isinstance(arguments, dict):
        errors.add("arguments_not_object", "", received=_received(arguments))
        return FormNormalization(errors=errors.items)
    raw = arguments.get("questions")
    if not isinstance(raw, list):
        errors.add("questions_must_be_list", "questions", received=_received(raw))
        return FormNormalization(errors=errors.items)
    if not raw:
        errors.add("questions_empty", "questions")
        return FormNormalization(errors=errors.items)
    if len(raw) > MAX_QUESTIONS:
        errors.add("questions_too_many", "questions", limit=MAX_QUESTIONS, count=len(raw))
        return FormNormalization(errors=errors.items)
    seen: dict[str, int] = {}
    questions = [_question(item, n, seen, errors) for n, item in enumerate(raw, start=1)]
    if errors.items:
        return FormNormalization(errors=errors.items)
    return FormNormalization(questions=[q for q in questions if q is not None])


def _first(item: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any]:
    for key in keys:
        if key in item and item[key] is not None:
            return key, item[key]
    return keys[0], None


def _question(item: Any, n: int, seen: dict[str, int], errors: _Errors) -> dict[str, Any] | None:
    path = f"questions[{n}]"
    if not isinstance(item, dict):
        errors.add("question_not_object", path, received=_received(item))
        return None
    qid = _question_id(item, n, path, seen, errors)
    _key, text = _first(item, QUESTION_TEXT_KEYS)
    if not isinstance(text, str) or not text.strip():
        errors.add("question_text_required", f"{path}.question")
        text = ""
    elif not errors.fits(text.strip(), MAX_TEXT_CHARS, f"{path}.question"):
        text = ""
    input_type, implied_multi, multiline = _input_type(item, path, errors)
    multi = _flag(item, MULTI_KEYS, path, errors)
    required = _flag(item, ("required",), path, errors)
    placeholder = _string_field(item, "placeholder", path, errors)
    has_options = item.get("options") not in (None, [])  # [] is how text is normalized
    options: list[dict[str, str]] = []
    if input_type == "choice":
        options = _options(item.get("options"), path, errors)
    elif input_type == "text" and has_options:
        errors.add("options_not_allowed", f"{path}.options")
    is_multi = input_type == "choice" and bool(multi if multi is not None else implied_multi)
    default = _default(item.get("default"), input_type, is_multi, options, path, errors)
    return {
        "id": qid,
        "question": text.strip(),
        "input_type": input_type,
        "options": options,
        "multi_select": is_multi,
        "multiline": input_type == "text" and multiline,
        "required": bool(required),
        "default": default,
        "placeholder": placeholder,
    }


def _question_id(
    item: dict[str, Any], n: int, path: str, seen: dict[str, int], errors: _Errors
) -> str:
    raw = item.get("id")
    if raw is None:
        qid = f"q{n}"
    elif isinstance(raw, int) and not isinstance(raw, bool) and _number_text(raw):
        qid = _number_text(raw)
    elif isinstance(raw, str) and raw.strip():
        qid = raw.strip()
    else:
        errors.add("question_id_blank", f"{path}.id")
        return ""
    if not errors.fits(qid, MAX_ID_CHARS, f"{path}.id"):
        return ""
    if qid in seen:
        errors.add("question_id_duplicate", f"{path}.id", id=_show(qid), first=seen[qid])
    else:
        seen[qid] = n
    return qid


def _input_type(item: dict[str, Any], path: str, errors: _Errors) -> tuple[str, bool | None, bool]:
    key, raw = _first(item, INPUT_TYPE_KEYS)
    if raw is None:
        return ("choice", None, False) if item.get("options") is not None else ("text", None, False)
    alias = raw.strip().lower().replace("-", "_").replace(" ", "_") if isinstance(raw, str) else ""
    if alias not in TYPE_ALIASES:
        errors.add("input_type_invalid", f"{path}.input_type", value=_show(raw))
        return ("", None, False)
    return TYPE_ALIASES[alias]


def _flag(item: dict[str, Any], keys: tuple[str, ...], path: str, errors: _Errors) -> bool | None:
    key, raw = _first(item, keys)
    if raw is None or isinstance(raw, bool):
        return raw
    errors.add("flag_invalid", f"{path}.{keys[0]}", name=keys[0], received=_received(raw))
    return None


def _string_field(item: dict[str, Any], name: str, path: str, errors: _Errors) -> str:
    raw = item.get(name)
    if raw is None:
        return ""
    if not isinstance(raw, str):
        errors.add("text_field_invalid", f"{path}.{name}", name=name, received=_received(raw))
        return ""
    if not errors.fits(raw.strip(), MAX_TEXT_CHARS, f"{path}.{name}"):
        return ""
    return raw.strip()


def _options(raw: Any, path: str, errors: _Errors) -> list[dict[str, str]]:
    if not isinstance(raw, list) or not raw:
        errors.add("options_required", f"{path}.options")
        return []
    if len(raw) > MAX_OPTIONS:
        errors.add("options_too_many", f"{path}.options", limit=MAX_OPTIONS, count=len(raw))
        return []
    options: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    for n, entry in enumerate(raw, start=1):
        option = _option(entry)
        if option is None:
            errors.add("option_invalid", f"{path}.options[{n}]")
            continue
        opath = f"{path}.options[{n}]"
        if not all(errors.fits(option[k], MAX_OPTION_CHARS, opath) for k in ("label", "value")):
            continue
        value = option["value"]
        if value in seen:
            errors.add(
                "option_value_duplicate",
                f"{path}.options[{n}]",
                value=_show(value),
                first=seen[value],
            )
            continue
        seen[value] = n
        options.append(option)
    return options


def _number_text(value: float) -> str:
    """A number as option text; "" for ones no one types (huge, inf, nan): ``str()`` of
    an integer of thousands of digits even raises."""
    if isinstance(value, int) and -(10**15) < value < 10**15:
        return str(value)
    if isinstance(value, float) and math.isfinite(value) and abs(value) < 1e15:
        return str(value)
    return ""


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return _number_text(value) or None
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _option(entry: Any) -> dict[str, str] | None:
    if not isinstance(entry, dict):
        text = _scalar(entry)
        return {"label": text, "value": text} if text is not None else None
    label = next(
        (s for k in ("label", "text", "title", "name") if (s := _scalar(entry.get(k)))), None
    )
    value = next((s for k in ("value", "id", "key") if (s := _scalar(entry.get(k)))), None)
    if label is None and value is None:
        return None
    return {"label": label or value or "", "value": value or label or ""}


def _default(
    raw: Any,
    input_type: str,
    multi: bool,
    options: list[dict[str, str]],
    path: str,
    errors: _Errors,
) -> str | list[str] | None:
    if raw is None or input_type == "":
        return [] if multi else None
    where = f"{path}.default"
    if input_type == "text":
        if not isinstance(raw, str):
            errors.add("default_invalid", where, expected="string", received=_received(raw))
            return None
        return raw if errors.fits(raw, MAX_TEXT_CHARS, where) else None
    if not options:
        return [] if multi else None  # the options error is already reported
    by_label = {o["label"]: o["value"] for o in options}
    values = {o["value"] for o in options}
    items = raw if multi and isinstance(raw, list) else [raw]
    if not multi and isinstance(raw, list):
        errors.add("default_invalid", where, expected="option", received="array")
        return None
    if len(items) > MAX_OPTIONS:
        errors.add("options_too_many", where, limit=MAX_OPTIONS, count=len(items))
        return []
    chosen: list[str] = []
    allowed = _allowed([o["value"] for o in options])
    for entry in items:
        text = _scalar(entry)
        value = text if text in values else by_label.get(text or "")
        if value is None:
            errors.add("default_not_in_options", where, value=_show(entry), allowed=allowed)
        elif value not in chosen:
            chosen.append(value)
    if multi:
        return chosen
    return chosen[0] if chosen else None
