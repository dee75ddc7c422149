"""XML+JSON blocks: ``<name>{json}</name>`` requests and ``<name-response>`` answers.

Requests are read exactly as ``questionnaire_async`` normalizes its arguments
(DESIGN §4.6): spec 000's aliases and ``{value, label}`` options, nothing looser.  A block whose whole tags were entity-escaped
(``&lt;questionnaire&gt;``) is read too; its body is HTML-unescaped only when it is not
valid JSON as written.  Prose outside a block is never decoded.
"""

from __future__ import annotations

import html
import json
from typing import Any

from .error_messages import make_error, type_name
from .limits import MAX_BODY_BYTES, MAX_DEPTH
from .names import RESPONSE_TYPES
from .normalize import normalize_arguments, question_from_dict
from .segments import ProtocolError, Questionnaire

MAX_DUPLICATE_ERRORS = 20
"""Duplicate keys reported for one body (a hostile body could repeat thousands)."""


class JsonProblem(Exception):
    def __init__(self, *errors: ProtocolError) -> None:
        super().__init__(errors[0].code)
        self.errors = errors


class _Duplicates:
    """``object_pairs_hook`` that builds plain dicts and remembers which objects
    repeated a key (by identity: the objects live as long as the parsed value)."""

    def __init__(self) -> None:
        self.found: dict[int, list[str]] = {}

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) < len(pairs):
            seen: set[str] = set()
            repeated: list[str] = []
            for key, _ in pairs:
                if key in seen and key not in repeated:
                    repeated.append(key)
                seen.add(key)
            self.found[id(obj)] = repeated
        return obj

    def problem(self, data: Any, prefix: str, lang: str) -> JsonProblem:
        """``{prefix}.json.duplicate_key`` for each repeated key (path: the key's)."""
        return JsonProblem(
            *(
                make_error(f"{prefix}.json.duplicate_key", path, lang, key=key)
                for path, key in self.paths(data)
            )
        )

    def paths(self, data: Any) -> list[tuple[str, str]]:
        """``(path, key)`` of every repeated key, in document order (iterative walk)."""
        result: list[tuple[str, str]] = []
        stack: list[tuple[Any, str]] = [(data, "")]
        while stack and len(result) < MAX_DUPLICATE_ERRORS:
            value, path = stack.pop()
            if isinstance(value, dict):
                for key in self.found.get(id(value), ()):
                    result.append((f"{path}.{key}" if path else key, key))
                children = [(v, f"{path}.{k}" if path else k) for k, v in value.items()]
            elif isinstance(value, list):
                children = [(v, f"{path}[{i}]") for i, v in enumerate(value, start=1)]
            else:
                continue
            stack.extend(reversed(children))
        return result[:MAX_DUPLICATE_ERRORS]


def load_json_object(
    body: str, *, prefix: str, lang: str, escaped: bool, first_line: int
) -> dict[str, Any]:
    """Parse a JSON object body or raise :class:`JsonProblem` (``{prefix}.json.*``).

    Nesting deeper than ``MAX_DEPTH`` is ``{prefix}.json.too_deep`` whether the decoder
    gave up (``RecursionError``) or the depth check below found it, so nothing deep ever
    reaches the validators, the templates or ``json.dumps``.  An integer too long for
    ``int()`` is a syntax error.
    """
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise JsonProblem(
            make_error(f"{prefix}.json.too_large", "", lang, size=size, limit=MAX_BODY_BYTES)
        )
    duplicates = _Duplicates()
    try:
        data = _loads(body, escaped, duplicates)
    except json.JSONDecodeError as exc:
        error = make_error(
            f"{prefix}.json.syntax",
            "",
            lang,
            line=first_line + exc.lineno - 1,
            column=exc.colno,
            problem=exc.msg,
        )
        raise JsonProblem(error) from None
    except RecursionError:
        raise JsonProblem(_too_deep(prefix, lang)) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        error = make_error(
            f"{prefix}.json.syntax", "", lang, line=first_line, column=1, problem=str(exc)[:80]
        )
        raise JsonProblem(error) from None
    if _deeper_than(data, MAX_DEPTH):
        raise JsonProblem(_too_deep(prefix, lang))
    if duplicates.found:
        raise duplicates.problem(data, prefix, lang)
    if not isinstance(data, dict):
        error = make_error(f"{prefix}.json.not_object", "", lang, received_type=type_name(data))
        raise JsonProblem(error)
    return data


def _too_deep(prefix: str, lang: str) -> ProtocolError:
    return make_error(f"{prefix}.json.too_deep", "", lang, limit=MAX_DEPTH)


def _deeper_than(data: Any, limit: int) -> bool:
    """True when lists/objects nest more than ``limit`` levels (iterative: no recursion)."""
    if not isinstance(data, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _loads(body: str, escaped: bool, hook: _Duplicates) -> Any:
    try:
        return json.loads(body, strict=False, object_pairs_hook=hook)
    except json.JSONDecodeError:
        if escaped and "&" in body:
            hook.found.clear()  # the first attempt's objects are gone (ids may be reused)
            return json.loads(html.unescape(body), strict=False, object_pairs_hook=hook)
        raise


def read_request(
    body: str, *, name: str, questionnaire_id: str, lang: str, escaped: bool, first_line: int
) -> Questionnaire | tuple[ProtocolError, ...]:
    """Read an XML+JSON request body: a :class:`Questionnaire` or its errors."""
    try:
        data = load_json_object(
            body, prefix="questionnaire", lang=lang, escaped=escaped, first_line=first_line
        )
    except JsonProblem as problem:
        return problem.errors
    title, questions, errors = normalize_arguments(data, prefix="questionnaire.json", lang=lang)
    if errors:
        return tuple(errors)
    return Questionnaire(
        name=name,
        questionnaire_id=questionnaire_id,
        title=title,
        questions=tuple(question_from_dict(q) for q in questions),
    )


def read_response(
    body: str, *, lang: str, escaped: bool, first_line: int
) -> dict[str, Any] | tuple[ProtocolError, ...]:
    """Read a response body: the payload dict, or errors when its shape is wrong.

    Shape: an object with a non-empty string ``questionnaire_id`` and an ``answers``
    list of objects that each have a string ``question_id``; ``type`` when present is
    ``questionnaire_response`` or ``sage_questionnaire_response``.
    """
    try:
        data = load_json_object(
            body, prefix="response", lang=lang, escaped=escaped, first_line=first_line
        )
    except JsonProblem as problem:
        return problem.errors
    errors: list[ProtocolError] = []
    rtype = data.get("type")
    if "type" in data and rtype not in RESPONSE_TYPES:
        errors.append(
            make_error(
                "response.type_invalid", "type", lang, value=rtype, allowed=sorted(RESPONSE_TYPES)
            )
        )
    qid = data.get("questionnaire_id")
    if not isinstance(qid, str) or not qid.strip():
        errors.append(make_error("response.questionnaire_id.invalid", "questionnaire_id", lang))
    if "status" in data and not isinstance(data["status"], str):
        errors.append(make_error("response.status.invalid", "status", lang))
    answers = data.get("answers")
    if not isinstance(answers, list):
        errors.append(make_error("response.answers.invalid", "answers", lang))
    else:
        for index, answer in enumerate(answers, start=1):
            if not isinstance(answer, dict) or not isinstance(answer.get("question_id"), str):
                errors.append(make_error("response.answer.invalid", f"answers[{index}]", lang))
    return tuple(errors) if errors else data
