"""Lenient question normalization shared by ``questionnaire_async`` and XML+JSON blocks.

It accepts what models tend to write — type aliases (``multiple_choice``, ``text``),
string options or ``{value, label}`` objects, ``title`` instead of ``text``, missing ids
and defaults — and returns the normalized question dicts of spec 000.  Errors carry
the twelve suffixes of DESIGN §5, plus the caps of ``limits.py`` (``questions_too_many``,
``options_too_many``, ``text_too_long``), under a caller-chosen prefix
(``questionnaire.start`` for the tool, ``questionnaire.json`` for XML blocks).

Linear in the input: counts are capped before items are looked at, and every
membership test (duplicate option values, defaults) is a dict or set look-up.
"""

from __future__ import annotations

from typing import Any

from .error_messages import make_error, type_name
from .limits import MAX_ID_CHARS, MAX_OPTION_CHARS, MAX_OPTIONS, MAX_QUESTIONS, MAX_TEXT_CHARS
from .segments import Option, ProtocolError, Question

TYPE_ALIASES: dict[str, str] = {
    "single_choice": "single_choice",
    "multiple_choice": "multi_choice",
    "multi_choice": "multi_choice",
    "text": "free_text",
    "free_text": "free_text",
}
ACCEPTED_TYPES = list(TYPE_ALIASES)


class _Ctx:
    def __init__(self, prefix: str, lang: str) -> None:
        self.prefix = prefix
        self.lang = lang
        self.errors: list[ProtocolError] = []

    def add(self, suffix: str, path: str, **details: Any) -> None:
        self.errors.append(make_error(f"{self.prefix}.{suffix}", path, self.lang, **details))

    def fits(self, value: str, limit: int, path: str) -> bool:
        """False (and ``text_too_long``) when ``value`` is longer than ``limit``."""
        if len(value) <= limit:
            return True
        self.add("text_too_long", path, length=len(value), limit=limit)
        return False


def normalize_arguments(
    arguments: Any, *, prefix: str, lang: str
) -> tuple[str, list[dict[str, Any]], list[ProtocolError]]:
    """Normalize ``{"title"?, "questions": [...]}``: (title, questions, errors)."""
    ctx = _Ctx(prefix, lang)
    if not isinstance(arguments, dict):
        ctx.add("questions_must_be_list", "questions", received_type=type_name(arguments))
        return "", [], ctx.errors
    title = arguments.get("title")
    title = title.strip() if isinstance(title, str) else ""
    ctx.fits(title, MAX_TEXT_CHARS, "title")
    raw = arguments.get("questions")
    if not isinstance(raw, list):
        ctx.add("questions_must_be_list", "questions", received_type=type_name(raw))
        return title, [], ctx.errors
    if not raw:
        ctx.add("questions_empty", "questions")
        return title, [], ctx.errors
    if len(raw) > MAX_QUESTIONS:
        ctx.add("questions_too_many", "questions", count=len(raw), limit=MAX_QUESTIONS)
        return title, [], ctx.errors
    seen: dict[str, int] = {}
    questions = []
    for index, item in enumerate(raw, start=1):
        question = _question(item, index, seen, ctx)
        if question is not None:
            questions.append(question)
    return title, questions, ctx.errors


def _question(item: Any, index: int, seen: dict[str, int], ctx: _Ctx) -> dict[str, Any] | None:
    path = f"questions[{index}]"
    if not isinstance(item, dict):
        ctx.add("question_not_object", path, received_type=type_name(item))
        return None
    raw_type = item.get("type")
    qtype = TYPE_ALIASES.get(raw_type.strip().lower()) if isinstance(raw_type, str) else None
    if qtype is None:
        ctx.add("question_type_invalid", f"{path}.type", value=raw_type, allowed=ACCEPTED_TYPES)
    text = _text(item)
    if text is None:
        ctx.add("question_text_required", f"{path}.text")
    else:
        ctx.fits(text, MAX_TEXT_CHARS, f"{path}.text")
    qid = _question_id(item, index)
    if ctx.fits(qid, MAX_ID_CHARS, f"{path}.id"):
        if qid in seen:
            ctx.add("question_id_duplicate", f"{path}.id", id=qid, first_index=seen[qid])
        else:
            seen[qid] = index
    allow_other = _allow_other(item, path, ctx)
    options: list[dict[str, str]] | None = []
    default: Any = ""
    if qtype in ("single_choice", "multi_choice"):
        options = _options(item, path, qtype, ctx)
        default = _default(item, path, qtype, options, ctx)
    elif qtype == "free_text":
        default = _default(item, path, qtype, None, ctx)
        allow_other = False
    return {
        "id": qid,
        "type": qtype,
        "text": text,
        "options": options or [],
        "default": default,
        "allow_other": allow_other,
    }


def _text(item: dict[str, Any]) -> str | None:
    for key in ("text", "title"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _question_id(item: dict[str, Any], index: int) -> str:
    raw = item.get("id")
    if isinstance(raw, int) and not isinstance(raw, bool) and -(10**15) < raw < 10**15:
        return str(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    return f"q{index}"


def _allow_other(item: dict[str, Any], path: str, ctx: _Ctx) -> bool:
    value = item.get("allow_other")
    if value is None:
        return False
    if not isinstance(value, bool):
        ctx.add("allow_other_type_invalid", f"{path}.allow_other", received_type=type_name(value))
        return False
    return value


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and -1e15 < value < 1e15:
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _option(raw: Any) -> tuple[dict[str, str] | None, str]:
    """One normalized option, or None and the reason it is unusable."""
    if isinstance(raw, dict):
        value, label = _scalar_text(raw.get("value")), _scalar_text(raw.get("label"))
        if value is None and label is None:
            return None, "missing value and label"
        return {"value": value or str(label), "label": label or str(value)}, ""
    text = _scalar_text(raw)
    if text is None:
        return None, "empty string" if isinstance(raw, str) else "not a string or object"
    return {"value": text, "label": text}, ""


def _options(item: dict[str, Any], path: str, qtype: str, ctx: _Ctx) -> list[dict[str, str]] | None:
    raw = item.get("options")
    if not isinstance(raw, list) or not raw:
        ctx.add(
            "question_options_required", f"{path}.options", type=qtype, received_type=type_name(raw)
        )
        return None
    if len(raw) > MAX_OPTIONS:
        ctx.add("options_too_many", f"{path}.options", count=len(raw), limit=MAX_OPTIONS)
        return None
    options: list[dict[str, str]] = []
    values: set[str] = set()
    ok = True
    for index, entry in enumerate(raw, start=1):
        opath = f"{path}.options[{index}]"
        option, reason = _option(entry)
        if option is not None and not all(
            ctx.fits(option[key], MAX_OPTION_CHARS, opath) for key in ("value", "label")
        ):
            ok = False
            continue
        if option is not None and option["value"] in values:
            option, reason = None, "duplicate value"
        if option is None:
            ctx.add("question_option_invalid", opath, reason=reason, received_type=type_name(entry))
            ok = False
        else:
            values.add(option["value"])
            options.append(option)
    return options if ok else None


class _Lookup:
    """Option values and labels, so a default is matched in O(1)."""

    def __init__(self, options: list[dict[str, str]] | None) -> None:
        self.values = {o["value"] for o in options or []}
        self.by_label: dict[str, str] = {}
        for option in options or []:
            self.by_label.setdefault(option["label"], option["value"])

    def match(self, value: str) -> str | None:
        """The option value ``value`` names (by value, or leniently by label)."""
        if value in self.values:
            return value
        return self.by_label.get(value)


def _default(
    item: dict[str, Any], path: str, qtype: str, options: list[dict[str, str]] | None, ctx: _Ctx
) -> Any:
    raw, dpath = item.get("default"), f"{path}.default"
    allowed = [o["value"] for o in options or []]
    lookup = _Lookup(options)
    if qtype == "multi_choice":
        if raw is None:
            return []
        if not isinstance(raw, list):
            ctx.add(
                "default_type_invalid",
                dpath,
                expected="a list of option values",
                type=qtype,
                received_type=type_name(raw),
            )
            return []
        if len(raw) > MAX_OPTIONS:
            ctx.add("options_too_many", dpath, count=len(raw), limit=MAX_OPTIONS)
            return []
        values: list[str] = []
        chosen: set[str] = set()
        bad, bad_at = [], []
        for index, entry in enumerate(raw, start=1):
            found = lookup.match(entry) if isinstance(entry, str) and options else None
            if found is None and options is not None:
                bad.append(entry)
                bad_at.append(index)
            elif found is not None and found not in chosen:
                chosen.add(found)
                values.append(found)
        if bad:
            ctx.add(
                "default_list_invalid_items",
                dpath,
                invalid_items=bad,
                indexes=bad_at,
                allowed=allowed,
            )
        return values
    if raw is None:
        return ""
    if isinstance(raw, int | float) and not isinstance(raw, bool) and -1e15 < raw < 1e15:
        raw = str(raw)
    if not isinstance(raw, str):
        ctx.add(
            "default_type_invalid",
            dpath,
            expected="a string",
            type=qtype,
            received_type=type_name(raw),
        )
        return ""
    if qtype == "single_choice" and raw != "" and options is not None:
        found = lookup.match(raw)
        if found is None:
            ctx.add("default_value_not_in_options", dpath, value=raw, allowed=allowed)
            return ""
        return found
    if qtype == "free_text" and not ctx.fits(raw, MAX_TEXT_CHARS, dpath):
        return ""
    return raw


def question_from_dict(data: dict[str, Any]) -> Question:
    """A :class:`Question` from a normalized question dict."""
    default = data.get("default", "")
    return Question(
        id=str(data["id"]),
        type=str(data["type"]),
        text=str(data["text"]),
        options=tuple(Option(str(o["value"]), str(o["label"])) for o in data.get("options", [])),
        default=tuple(default) if isinstance(default, list) else str(default),
        allow_other=bool(data.get("allow_other", False)),
    )
