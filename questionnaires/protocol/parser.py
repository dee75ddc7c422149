"""``parse_message``: a message → ordered Markdown / questionnaire / response / invalid
segments (DESIGN §4.2–4.9).  The renderer, self-check and the lint command all call it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .error_messages import make_error
from .fenced import validate_fenced
from .limits import MAX_BLOCKS
from .names import RENDERED_NAMES, SELF_CHECK_NAMES, response_names
from .scanner import RawBlock, scan
from .segments import (
    Encoding,
    InvalidSegment,
    MarkdownSegment,
    ProtocolError,
    Questionnaire,
    QuestionnaireSegment,
    ResponseSegment,
    Segment,
)
from .text import parse_text
from .xmljson import read_request, read_response

_T = TypeVar("_T")
_ALL_TAGS = SELF_CHECK_NAMES | response_names(SELF_CHECK_NAMES)
_TRIGGER = "questionnaire"


def parse_message(
    content: str, *, message_id: str | int, role: str = "assistant", lang: str = "en"
) -> list[Segment]:
    """Split ``content`` into segments, before any Markdown rendering.

    Assistant messages (any role but ``"user"``) yield questionnaire requests under the
    rendered names (``questionnaire``, ``sage-questionnaire``); user messages yield
    their ``-response`` blocks.  Everything else is Markdown.  The segments' ``raw``
    texts concatenate back to ``content`` exactly, and ids are pure functions of
    ``message_id`` and ``content``.  Error messages use ``lang`` (en or zh-hans).
    """
    return parse_with_names(
        content, message_id=message_id, role=role, lang=lang, names=RENDERED_NAMES
    )


def parse_with_names(
    content: str,
    *,
    message_id: str | int,
    role: str,
    lang: str,
    names: frozenset[str],
    unclosed_fence_invalid: bool = False,
) -> list[Segment]:
    """:func:`parse_message` with an explicit request-name registry (self-check passes
    all five registered names).

    An unclosed questionnaire fence makes the rest of the message code, as in Markdown
    (DESIGN §4.2), so the renderer shows it as Markdown.  Self-check passes
    ``unclosed_fence_invalid=True`` to report it instead: a truncated questionnaire is
    exactly what the model must be asked to repair.
    """
    if not content:
        return []
    if _TRIGGER not in content.lower():
        return [MarkdownSegment(raw=content, start=0, end=len(content))]
    if role == "user":
        blocks = scan(
            content,
            fence_names=frozenset(),
            tag_names=response_names(names),
            closer_names=_ALL_TAGS,
        )
    else:
        blocks = scan(content, fence_names=names, tag_names=names, closer_names=_ALL_TAGS)
    if not unclosed_fence_invalid:
        blocks = [b for b in blocks if not (b.kind == "fence" and b.problem == "unclosed")]
    segments: list[Segment] = []
    last = 0
    for ordinal, block in enumerate(blocks, start=1):
        if block.start > last:
            segments.append(MarkdownSegment(content[last : block.start], last, block.start))
        if ordinal > MAX_BLOCKS:
            segments.append(_too_many(content, block, len(blocks), role, lang))
            return segments
        segments.append(_segment(content, block, ordinal, f"{message_id}_q{ordinal}", role, lang))
        last = block.end
    if last < len(content):
        segments.append(MarkdownSegment(content[last:], last, len(content)))
    return segments


def _segment(
    content: str, block: RawBlock, ordinal: int, qid: str, role: str, lang: str
) -> Segment:
    raw = content[block.start : block.end]
    body = parse_text(content[block.body_start : block.body_end])
    if block.kind == "fence":
        result = _fenced(block, body, qid, lang)
        encoding = "yaml"
    elif role == "user":
        return _response(block, raw, body, ordinal, lang)
    else:
        result = _tag_checked(
            block,
            "questionnaire",
            lang,
            lambda: read_request(
                body,
                name=block.name,
                questionnaire_id=qid,
                lang=lang,
                escaped=block.escaped,
                first_line=block.line,
            ),
        )
        encoding = "json"
    if isinstance(result, Questionnaire):
        return QuestionnaireSegment(
            raw=raw,
            start=block.start,
            end=block.end,
            encoding=encoding,  # type: ignore[arg-type]
            ordinal=ordinal,
            questionnaire=result,
        )
    return InvalidSegment(raw, block.start, block.end, block.name, encoding, result, ordinal)  # type: ignore[arg-type]


def _too_many(content: str, block: RawBlock, count: int, role: str, lang: str) -> Segment:
    """The rest of the message from the first block past ``MAX_BLOCKS``: one invalid
    segment, so a message of thousands of blocks costs a bounded number of cards and
    Markdown segments (its raw text is still shown, nothing is lost)."""
    prefix = "response" if role == "user" else "questionnaire"
    error = make_error(f"{prefix}.blocks.too_many", "", lang, count=count, limit=MAX_BLOCKS)
    encoding: Encoding = "yaml" if block.kind == "fence" else "json"
    end = len(content)
    return InvalidSegment(
        content[block.start :], block.start, end, block.name, encoding, (error,), MAX_BLOCKS + 1
    )


def _tag_checked(
    block: RawBlock, prefix: str, lang: str, read: Callable[[], _T | tuple[ProtocolError, ...]]
) -> _T | tuple[ProtocolError, ...]:
    """A tag block's body as ``read()`` reads it, after the tag's own errors: attributes
    (reported with the body's errors, so one repair fixes both), then a structural
    problem (mismatch, unclosed, self-closing), which leaves no body worth reading."""
    errors: list[ProtocolError] = []
    if block.attributes:
        errors.append(
            make_error(
                f"{prefix}.tag.attributes", "", lang, name=block.name, attributes=block.attributes
            )
        )
    if block.problem is not None:
        errors.append(make_error(f"{prefix}.tag.{block.problem}", "", lang, **block.details))
        return tuple(errors)
    result = read()
    if not errors:
        return result
    return tuple(errors) + (result if isinstance(result, tuple) else ())


def _fenced(
    block: RawBlock, body: str, qid: str, lang: str
) -> Questionnaire | tuple[ProtocolError, ...]:
    errors: list[ProtocolError] = []
    if not block.prose_before:
        errors.append(make_error("questionnaire.preface.required", "", lang))
    if block.problem == "unclosed":
        errors.append(
            make_error(
                "questionnaire.fence.unclosed", "", lang, name=block.name, length=block.fence_len
            )
        )
        return tuple(errors)
    if block.problem == "nested":
        errors.append(make_error("questionnaire.fence.nested", "", lang, **block.details))
        return tuple(errors)
    result = validate_fenced(
        body, name=block.name, questionnaire_id=qid, lang=lang, first_line=block.line + 1
    )
    if isinstance(result, Questionnaire) and not errors:
        return result
    return tuple(errors) + (result if isinstance(result, tuple) else ())


def _response(block: RawBlock, raw: str, body: str, ordinal: int, lang: str) -> Segment:
    result = _tag_checked(
        block,
        "response",
        lang,
        lambda: read_response(body, lang=lang, escaped=block.escaped, first_line=block.line),
    )
    if isinstance(result, dict):
        return ResponseSegment(raw, block.start, block.end, block.name, result, ordinal)
    return InvalidSegment(raw, block.start, block.end, block.name, "json", result, ordinal)


__all__ = ["parse_message", "parse_with_names"]
