"""Strict validation of fenced YAML questionnaires (spec "fenced YAML 字段", DESIGN §4.4).

Top level exactly ``title`` + ``questions``; each question ``type`` (no aliases),
``text``, ``default``, choice ``options`` as plain strings, optional ``allow_other``.
All problems of a block are reported together, each with a 1-based field path such as
``questions[2].default[1]``.  The caps of ``limits.py`` are checked before items are
looked at one by one, and option membership is a set look-up, so a block costs time
linear in its size.
"""

from __future__ import annotations

from .error_messages import make_error, type_name
from .jsontypes import JsonValue
from .limits import MAX_OPTION_CHARS, MAX_OPTIONS, MAX_QUESTIONS, MAX_TEXT_CHARS
from .segments import Option, ProtocolError, Question, Questionnaire
from .yaml_strict import YamlProblem, load_strict

TOP_FIELDS = ("title", "questions")
QUESTION_FIELDS = ("type", "text", "options", "default", "allow_other")
TYPES = ("single_choice", "multi_choice", "free_text")
CHOICE_TYPES = ("single_choice", "multi_choice")


class _Errors:
    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.items: list[ProtocolError] = []

    def add(self, code: str, path: str, **details: JsonValue) -> None:
        self.items.append(make_error(code, path, self.lang, **details))

    def fits(self, value: str, limit: int, path: str) -> bool:
        """False (and ``questionnaire.text.too_long``) when ``value`` is too long."""
        if len(value) <= limit:
            return True
        self.add("questionnaire.text.too_long", path, length=len(value), limit=limit)
        return False


def _blank(value: object) -> bool:
    return not isinstance(value, str) or not value.strip()


def validate_fenced(
    body: str, *, name: str, questionnaire_id: str, lang: str, first_line: int = 1
) -> Questionnaire | tuple[ProtocolError, ...]:
    """Validate a fenced YAML body: a :class:`Questionnaire` or the tuple of errors.

    ``first_line`` is the message line of the body's first line, so YAML errors point
    at message lines.
    """
    errors = _Errors(lang)
    try:
        data = load_strict(body)
    except YamlProblem as problem:
        details = dict(problem.details)
        if details.get("line"):
            details["line"] = details["line"] + first_line - 1
        errors.add(problem.code, "", **details)
        return tuple(errors.items)
    if not isinstance(data, dict):
        errors.add("questionnaire.root.not_mapping", "", received_type=type_name(data))
        return tuple(errors.items)
    for key in data:
        if key not in TOP_FIELDS:
            errors.add("questionnaire.field.unknown", key, field=key, allowed=list(TOP_FIELDS))
    title = data.get("title")
    if _blank(title):
        errors.add("questionnaire.title.required", "title", received_type=type_name(title))
    else:
        errors.fits(str(title), MAX_TEXT_CHARS, "title")
    questions = _questions(data, errors)
    if errors.items:
        return tuple(errors.items)
    return Questionnaire(
        name=name, questionnaire_id=questionnaire_id, title=str(title), questions=tuple(questions)
    )


def _questions(data: dict[str, object], errors: _Errors) -> list[Question]:
    if "questions" not in data:
        errors.add("questionnaire.questions.required", "questions")
        return []
    raw = data["questions"]
    if not isinstance(raw, list):
        errors.add(
            "questionnaire.questions.type_invalid", "questions", received_type=type_name(raw)
        )
        return []
    if not raw:
        errors.add("questionnaire.questions.empty", "questions")
        return []
    if len(raw) > MAX_QUESTIONS:
        errors.add(
            "questionnaire.questions.too_many", "questions", count=len(raw), limit=MAX_QUESTIONS
        )
        return []
    result = []
    for index, item in enumerate(raw, start=1):
        question = _question(item, index, errors)
        if question is not None:
            result.append(question)
    return result


def _question(item: object, index: int, errors: _Errors) -> Question | None:
    path = f"questions[{index}]"
    if not isinstance(item, dict):
        errors.add("questionnaire.question.not_mapping", path, received_type=type_name(item))
        return None
    before = len(errors.items)
    for key in item:
        if key not in QUESTION_FIELDS:
            errors.add(
                "questionnaire.field.unknown",
                f"{path}.{key}",
                field=key,
                allowed=list(QUESTION_FIELDS),
            )
    qtype = item.get("type")
    if "type" not in item:
        errors.add("questionnaire.question.type_required", f"{path}.type", allowed=list(TYPES))
    elif qtype not in TYPES:
        errors.add(
            "questionnaire.question.type_invalid", f"{path}.type", value=qtype, allowed=list(TYPES)
        )
    text = item.get("text")
    if _blank(text):
        errors.add("questionnaire.question.text_required", f"{path}.text")
    else:
        errors.fits(str(text), MAX_TEXT_CHARS, f"{path}.text")
    if "default" not in item:
        errors.add("questionnaire.default.required", f"{path}.default")
    if qtype in CHOICE_TYPES:
        options = _options(item, path, str(qtype), errors)
        default = _choice_default(item, path, str(qtype), options, errors)
        allow_other = _allow_other(item, path, errors)
    else:
        options, allow_other = None, False
        default = _text_default(item, path, errors) if qtype == "free_text" else ""
    if len(errors.items) > before:
        return None
    return Question(
        id=f"q{index}",
        type=str(qtype),
        text=str(text),
        options=tuple(Option(o, o) for o in options or ()),
        default=default,
        allow_other=allow_other,
    )


def _options(item: dict[str, object], path: str, qtype: str, errors: _Errors) -> list[str] | None:
    """The option strings, or None when they are unusable."""
    if "options" not in item:
        errors.add("questionnaire.options.required", f"{path}.options", type=qtype)
        return None
    raw = item["options"]
    if not isinstance(raw, list):
        errors.add(
            "questionnaire.options.type_invalid", f"{path}.options", received_type=type_name(raw)
        )
        return None
    if not raw:
        errors.add("questionnaire.options.empty", f"{path}.options")
        return None
    if len(raw) > MAX_OPTIONS:
        errors.add(
            "questionnaire.options.too_many", f"{path}.options", count=len(raw), limit=MAX_OPTIONS
        )
        return None
    seen: set[str] = set()
    ok = True
    for index, option in enumerate(raw, start=1):
        opath = f"{path}.options[{index}]"
        if _blank(option):
            errors.add("questionnaire.option.invalid", opath, received_type=type_name(option))
            ok = False
        elif not errors.fits(option, MAX_OPTION_CHARS, opath):
            ok = False
        elif option in seen:
            errors.add("questionnaire.option.duplicate", opath, value=option)
            ok = False
        else:
            seen.add(option)
    return list(raw) if ok else None


def _choice_default(
    item: dict[str, object], path: str, qtype: str, options: list[str] | None, errors: _Errors
) -> str | tuple[str, ...]:
    if "default" not in item:
        return "" if qtype == "single_choice" else ()
    default, dpath = item["default"], f"{path}.default"
    known = frozenset(options or ())
    if qtype == "single_choice":
        if not isinstance(default, str):
            errors.add(
                "questionnaire.default.type_invalid",
                dpath,
                expected="a string",
                received_type=type_name(default),
            )
            return ""
        if options is not None and default not in known:
            errors.add(
                "questionnaire.default.not_in_options", dpath, value=default, allowed=options
            )
        return default
    if not isinstance(default, list):
        errors.add(
            "questionnaire.default.type_invalid",
            dpath,
            expected="a list of strings",
            received_type=type_name(default),
        )
        return ()
    if len(default) > MAX_OPTIONS:
        errors.add("questionnaire.options.too_many", dpath, count=len(default), limit=MAX_OPTIONS)
        return ()
    for index, value in enumerate(default, start=1):
        ipath = f"{dpath}[{index}]"
        if not isinstance(value, str):
            errors.add(
                "questionnaire.default.type_invalid",
                ipath,
                expected="a string",
                received_type=type_name(value),
            )
        elif options is not None and value not in known:
            errors.add("questionnaire.default.not_in_options", ipath, value=value, allowed=options)
    return tuple(str(v) for v in default)


def _text_default(item: dict[str, object], path: str, errors: _Errors) -> str:
    if "options" in item:
        errors.add("questionnaire.options.forbidden", f"{path}.options")
    if "allow_other" in item:
        errors.add("questionnaire.allow_other.forbidden", f"{path}.allow_other")
    default = item.get("default", "")
    if not isinstance(default, str):
        errors.add(
            "questionnaire.default.type_invalid",
            f"{path}.default",
            expected="a string",
            received_type=type_name(default),
        )
        return ""
    errors.fits(default, MAX_TEXT_CHARS, f"{path}.default")
    return default


def _allow_other(item: dict[str, object], path: str, errors: _Errors) -> bool:
    value = item.get("allow_other", False)
    if not isinstance(value, bool):
        errors.add(
            "questionnaire.allow_other.type_invalid",
            f"{path}.allow_other",
            received_type=type_name(value),
        )
        return False
    return value
