"""Question normalization shared by ``questionnaire_async`` and XML+JSON blocks.

Strict where spec 000's field table is strict, and normalizing only what it names:
the five ``type`` spellings exactly (``multiple_choice`` → ``multi_choice``, ``text`` →
``free_text``), string options → ``{value: text, label: text}``, ``title`` for a
question's ``text``, missing ids ``qN``, missing defaults (``""``, or ``[]`` for multi
choice).  Options are non-blank strings or ``{value, label}`` objects of non-blank
strings — a number is an error, not coerced; a default already has its type's shape
and names option *values* (a label is an error); ``null`` is a value, never absence
(``allow_other: null`` and ``default: null`` are errors).  Every error is reported,
in question order and field order, with 1-based paths.

What is still accepted leniently is said back in ``notes`` (same shape as errors,
codes ``{prefix}.note.*``): ignored fields, an integer id written as a string,
duplicate multi-choice defaults dropped.  ``questionnaire_async`` returns them to the
model; an XML block is valid with them.

Error codes are the twelve suffixes of DESIGN §5, plus ``title_invalid``,
``question_id_invalid`` and the caps of ``limits.py`` (``questions_too_many``,
``options_too_many``, ``text_too_long``), under a caller-chosen prefix
(``questionnaire.start`` for the tool, ``questionnaire.json`` for XML blocks).

Linear in the input: counts are capped before items are looked at, and every
membership test (duplicate option values, defaults) is a dict or set look-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .error_messages import make_error, type_name
from .jsontypes import JsonValue
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
TOP_FIELDS = ("title", "questions")
QUESTION_FIELDS = ("id", "type", "text", "title", "options", "default", "allow_other")
OPTION_FIELDS = ("value", "label")
_MAX_INT_ID = 10**15


@dataclass
class Normalized:
    """What :func:`normalize` returns: questions or errors, and notes either way."""

    title: str = ""
    questions: list[dict[str, JsonValue]] = field(default_factory=list)
    errors: list[ProtocolError] = field(default_factory=list)
    notes: list[ProtocolError] = field(default_factory=list)


class _Ctx:
    def __init__(self, prefix: str, lang: str) -> None:
        self.prefix = prefix
        self.lang = lang
        self.out = Normalized()

    def add(self, suffix: str, path: str, **details: JsonValue) -> None:
        self.out.errors.append(make_error(f"{self.prefix}.{suffix}", path, self.lang, **details))

    def note(self, suffix: str, path: str, **details: JsonValue) -> None:
        self.out.notes.append(
            make_error(f"{self.prefix}.note.{suffix}", path, self.lang, **details)
        )

    def fits(self, value: str, limit: int, path: str) -> bool:
        """False (and ``text_too_long``) when ``value`` is longer than ``limit``."""
        if len(value) <= limit:
            return True
        self.add("text_too_long", path, length=len(value), limit=limit)
        return False

    def unknown_fields(self, data: dict[str, object], known: tuple[str, ...], path: str) -> None:
        for key in data:
            if key not in known:
                where = f"{path}.{key}" if path else str(key)
                self.note("field_ignored", where, field=str(key), allowed=list(known))


def normalize(arguments: object, *, prefix: str, lang: str) -> Normalized:
    """Validate and normalize ``{"title"?, "questions": [...]}`` (never raises)."""
    ctx = _Ctx(prefix, lang)
    if not isinstance(arguments, dict):
        ctx.add("questions_must_be_list", "questions", received_type=type_name(arguments))
        return ctx.out
    ctx.unknown_fields(arguments, TOP_FIELDS, "")
    ctx.out.title = _title(arguments, ctx)
    raw = arguments.get("questions")
    if not isinstance(raw, list):
        ctx.add("questions_must_be_list", "questions", received_type=type_name(raw))
    elif not raw:
        ctx.add("questions_empty", "questions")
    elif len(raw) > MAX_QUESTIONS:
        ctx.add("questions_too_many", "questions", count=len(raw), limit=MAX_QUESTIONS)
    else:
        seen: dict[str, int] = {}
        for index, item in enumerate(raw, start=1):
            question = _question(item, index, seen, ctx)
            if question is not None:
                ctx.out.questions.append(question)
    if ctx.out.errors:
        ctx.out.questions = []
    return ctx.out


def normalize_arguments(
    arguments: object, *, prefix: str, lang: str
) -> tuple[str, list[dict[str, JsonValue]], list[ProtocolError]]:
    """:func:`normalize` as ``(title, questions, errors)``."""
    out = normalize(arguments, prefix=prefix, lang=lang)
    return out.title, out.questions, out.errors


def _title(arguments: dict[str, object], ctx: _Ctx) -> str:
    if "title" not in arguments:
        return ""
    title = arguments["title"]
    if not isinstance(title, str):
        ctx.add("title_invalid", "title", received_type=type_name(title))
        return ""
    title = title.strip()
    ctx.fits(title, MAX_TEXT_CHARS, "title")
    return title


def _question(
    item: object, index: int, seen: dict[str, int], ctx: _Ctx
) -> dict[str, JsonValue] | None:
    path = f"questions[{index}]"
    if not isinstance(item, dict):
        ctx.add("question_not_object", path, received_type=type_name(item))
        return None
    ctx.unknown_fields(item, QUESTION_FIELDS, path)
    raw_type = item.get("type")
    qtype = TYPE_ALIASES.get(raw_type) if isinstance(raw_type, str) else None
    if qtype is None:
        ctx.add("question_type_invalid", f"{path}.type", value=raw_type, allowed=ACCEPTED_TYPES)
    text = _text(item, path, ctx)
    qid = _question_id(item, index, path, seen, ctx)
    options: list[dict[str, str]] | None = None
    default: JsonValue = None
    if qtype in ("single_choice", "multi_choice"):
        options = _options(item, path, qtype, ctx)
        default = _default(item, path, qtype, options, ctx)
    elif qtype == "free_text":
        if item.get("options", []) != []:  # [] is how a normalized text question says none
            ctx.note("field_ignored", f"{path}.options", field="options", type=qtype)
        default = _default(item, path, qtype, None, ctx)
    allow_other = _allow_other(item, path, qtype, ctx)
    return {
        "id": qid,
        "type": qtype,
        "text": text,
        "options": options or [],
        "default": default,
        "allow_other": allow_other,
    }


def _text(item: dict[str, object], path: str, ctx: _Ctx) -> str:
    """``text``, else ``title``: the first non-blank string; the other one is noted."""
    present = [key for key in ("text", "title") if key in item]
    chosen = next((k for k in present if not _blank(item[k])), None)
    if chosen is None:
        ctx.add("question_text_required", f"{path}.text")
        return ""
    for key in present:
        if key != chosen:
            ctx.note("field_ignored", f"{path}.{key}", field=key, used=chosen)
    text = str(item[chosen]).strip()
    ctx.fits(text, MAX_TEXT_CHARS, f"{path}.{chosen}")
    return text


def _question_id(
    item: dict[str, object], index: int, path: str, seen: dict[str, int], ctx: _Ctx
) -> str:
    ipath = f"{path}.id"
    raw = item.get("id", f"q{index}")
    if isinstance(raw, int) and not isinstance(raw, bool) and -_MAX_INT_ID < raw < _MAX_INT_ID:
        qid = str(raw)
        ctx.note("id_converted", ipath, id=qid)
    elif isinstance(raw, str) and raw.strip():
        qid = raw.strip()
    else:
        ctx.add("question_id_invalid", ipath, received_type=type_name(raw))
        return ""
    if not ctx.fits(qid, MAX_ID_CHARS, ipath):
        return ""
    if qid in seen:
        ctx.add("question_id_duplicate", ipath, id=qid, first_index=seen[qid])
    else:
        seen[qid] = index
    return qid


def _allow_other(item: dict[str, object], path: str, qtype: str | None, ctx: _Ctx) -> bool:
    if "allow_other" not in item:
        return False
    value = item["allow_other"]
    if not isinstance(value, bool):
        ctx.add("allow_other_type_invalid", f"{path}.allow_other", received_type=type_name(value))
        return False
    if qtype == "free_text":
        if value:
            ctx.note("field_ignored", f"{path}.allow_other", field="allow_other", type=qtype)
        return False
    return value


def _blank(value: object) -> bool:
    return not isinstance(value, str) or not value.strip()


def _option(raw: object, opath: str, ctx: _Ctx) -> tuple[dict[str, str] | None, str]:
    """One normalized option, or None and the reason it is unusable."""
    if isinstance(raw, str):
        text = raw.strip()
        return ({"value": text, "label": text}, "") if text else (None, "empty string")
    if not isinstance(raw, dict):
        return None, "not a string or object"
    value, label = raw.get("value"), raw.get("label")
    if _blank(value) and _blank(label):
        return None, "missing value and label"
    if _blank(value):
        return None, "value must be a non-empty string"
    if _blank(label):
        return None, "label must be a non-empty string"
    ctx.unknown_fields(raw, OPTION_FIELDS, opath)
    return {"value": str(value).strip(), "label": str(label).strip()}, ""


def _options(
    item: dict[str, object], path: str, qtype: str, ctx: _Ctx
) -> list[dict[str, str]] | None:
    """The normalized options, or None when any of them is unusable."""
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
        option, reason = _option(entry, opath, ctx)
        if option is not None and option["value"] in values:
            option, reason = None, "duplicate value"
        if option is None:
            ctx.add("question_option_invalid", opath, reason=reason, received_type=type_name(entry))
            ok = False
        elif all(ctx.fits(option[k], MAX_OPTION_CHARS, opath) for k in OPTION_FIELDS):
            values.add(option["value"])
            options.append(option)
        else:
            ok = False
    return options if ok else None


def _default(
    item: dict[str, object], path: str, qtype: str, options: list[dict[str, str]] | None, ctx: _Ctx
) -> JsonValue:
    """The default in its type's shape; option values are checked when the options are
    usable (otherwise their errors are already reported)."""
    dpath = f"{path}.default"
    if qtype == "multi_choice":
        return _multi_default(item, dpath, options, ctx)
    if "default" not in item:
        return ""
    raw = item["default"]
    if not isinstance(raw, str):
        ctx.add(
            "default_type_invalid",
            dpath,
            expected="a string",
            type=qtype,
            received_type=type_name(raw),
        )
        return ""
    if qtype == "free_text":
        return raw if ctx.fits(raw, MAX_TEXT_CHARS, dpath) else ""
    if raw and options is not None and raw not in {o["value"] for o in options}:
        allowed = [o["value"] for o in options]
        ctx.add("default_value_not_in_options", dpath, value=raw, allowed=allowed)
        return ""
    return raw


def _multi_default(
    item: dict[str, object], dpath: str, options: list[dict[str, str]] | None, ctx: _Ctx
) -> list[str]:
    if "default" not in item:
        return []
    raw = item["default"]
    if not isinstance(raw, list):
        expected = "a list of option values"
        received = type_name(raw)
        ctx.add(
            "default_type_invalid",
            dpath,
            expected=expected,
            type="multi_choice",
            received_type=received,
        )
        return []
    if len(raw) > MAX_OPTIONS:
        ctx.add("options_too_many", dpath, count=len(raw), limit=MAX_OPTIONS)
        return []
    known = {o["value"] for o in options or []}
    values: list[str] = []
    chosen: set[str] = set()
    bad, bad_at = [], []
    for index, entry in enumerate(raw, start=1):
        if not isinstance(entry, str) or (options is not None and entry not in known):
            bad.append(entry)
            bad_at.append(index)
        elif entry in chosen:
            ctx.note("default_duplicate_removed", f"{dpath}[{index}]", value=entry)
        else:
            chosen.add(entry)
            values.append(entry)
    if bad:
        allowed = [o["value"] for o in options or []]
        ctx.add(
            "default_list_invalid_items", dpath, invalid_items=bad, indexes=bad_at, allowed=allowed
        )
    return values


def _dicts(value: object) -> list[Mapping[str, object]]:
    return [o for o in value if isinstance(o, Mapping)] if isinstance(value, list) else []


def question_from_dict(data: Mapping[str, object]) -> Question:
    """A :class:`Question` from a normalized question dict."""
    default = data.get("default", "")
    return Question(
        id=str(data["id"]),
        type=str(data["type"]),
        text=str(data["text"]),
        options=tuple(
            Option(str(o["value"]), str(o["label"])) for o in _dicts(data.get("options"))
        ),
        default=tuple(default) if isinstance(default, list) else str(default),
        allow_other=bool(data.get("allow_other", False)),
    )
