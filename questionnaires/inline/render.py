"""Message rendering: segment first, then Markdown only the Markdown segments.

``render_messages`` turns messages into HTML, keeping the original segment order:
Markdown segments go through the caller's ``markdown`` function (the chat passes its
``js-default`` renderer; this package never imports ``chat``), protocol segments through
one template per kind under ``templates/questionnaires/cards/``.  Results are cached per
message, keyed by (message id, content hash, interactive state, answered state,
language), so long conversations are not re-parsed on every view.  No database access.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from questionnaires.inline.presenter import (
    Draft,
    ErrorCardView,
    MessageInput,
    MessageState,
    async_calls,
    card_view,
    dom_id,
    readable_answers,
    tool_result_questionnaire,
)
from questionnaires.protocol import (
    InvalidSegment,
    MarkdownSegment,
    Questionnaire,
    QuestionnaireSegment,
    ResponseSegment,
    Segment,
    parse_message,
)

Markdown = Callable[[str], str]
# Makes the Markdown renderer of one message: every Markdown segment of a message shares
# it, so a message's Markdown work is bounded however it is split (chat.rendering).
MarkdownFactory = Callable[[], Markdown]
CACHE_PREFIX = "qc:msg:v3"  # v3: a declined answer says so; no decline on a reopened declined card
CACHE_SECONDS = 60 * 60 * 24
logger = logging.getLogger(__name__)

CARD_TEMPLATES = {
    "questionnaire": "questionnaires/cards/questionnaire.html",
    "response": "questionnaires/cards/response.html",
    "invalid": "questionnaires/cards/invalid.html",
    "async_error": "questionnaires/cards/async_error.html",
    "render_error": "questionnaires/cards/render_error.html",
}


@dataclass(frozen=True, slots=True)
class RenderedMessage:
    """A message's body HTML plus what the page needs around it.

    ``card_state`` is ``""`` when no card of the message can change any more, otherwise
    a short token (``i`` interactive with a digest of the content, ``p`` waiting for a
    tool result); open tabs send
    it back so the server re-renders exactly the cards whose state changed.
    ``form_ids`` are the ids of submittable card forms (the page adds CSRF inputs).
    """

    html: SafeString
    card_state: str = ""
    form_ids: tuple[str, ...] = ()


def render_messages(
    messages: Sequence[MessageInput],
    states: Sequence[MessageState],
    *,
    markdown: MarkdownFactory,
    lang: str,
) -> list[RenderedMessage]:
    """Render many messages with one cache round trip."""
    keys = [cache_key(m, s, lang) for m, s in zip(messages, states, strict=True)]
    hits = cache.get_many(keys)
    out: list[RenderedMessage] = []
    misses: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for message, state, key in zip(messages, states, keys, strict=True):
        hit = hits.get(key)
        if hit is None:
            rendered = render_message(message, state, markdown=markdown, lang=lang)
            misses[key] = (str(rendered.html), rendered.card_state, rendered.form_ids)
        else:
            html, card_state, form_ids = hit
            rendered = RenderedMessage(mark_safe(html), card_state, tuple(form_ids))  # noqa: S308 - rendered by us
        out.append(rendered)
    if misses:
        cache.set_many(misses, CACHE_SECONDS)
    return out


def cache_key(message: MessageInput, state: MessageState, lang: str) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in (message.role, message.content, message.display_content):
        digest.update(part.encode())
        digest.update(b"\x1f")
    if message.tool_calls:
        results = {c: message.tool_results.get(c) for c in async_calls(message.tool_calls)}
        digest.update(json.dumps([message.tool_calls, results], sort_keys=True).encode())
    answered = ",".join(sorted(f"{q}={a.key}" for q, a in state.answered.items()))
    if state.drafts:  # a saved draft is part of what the card shows
        answered += json.dumps(state.drafts, sort_keys=True)
    flags = f"{int(state.interactive)}{int(state.preview)}{int(message.readonly)}"
    flags += f":{state.answer_url}:{state.change_url}"
    answered_hash = hashlib.sha1(answered.encode(), usedforsecurity=False).hexdigest()[:12]
    return f"{CACHE_PREFIX}:{message.id}:{digest.hexdigest()}:{flags}:{answered_hash}:{lang}"


def render_message(
    message: MessageInput,
    state: MessageState,
    *,
    markdown: MarkdownFactory,
    lang: str,
    draft: Draft | None = None,
) -> RenderedMessage:
    """One message's body (uncached: the submit view uses it to show a refused draft).

    Rendering one part can never fail the page: whatever goes wrong in a segment or a
    card shows as that part's error card with its raw text, and is logged (once per
    content, since the result is cached)."""
    parts: list[str] = []
    interactive: list[str] = []
    versions: list[str] = []  # answered cards that may still change: their versions
    text = message.display_content or message.content
    render_md = markdown()
    try:
        segments = _segments(message, lang)
    except Exception:
        logger.exception("message %s: segmenting failed", message.id)
        segments = None
        parts.append(_render_error(message, text, "all"))
    if segments is None and not parts:
        parts.append(_guarded(message, text, "md", lambda: render_md(text)))
    for n, segment in enumerate(segments or ()):
        parts.append(
            _guarded(
                message,
                segment.raw,
                n,
                functools.partial(
                    _segment_html, segment, message, state, render_md, draft, interactive, versions
                ),
            )
        )
    async_parts, pending = _async_parts(message, state, draft, interactive, versions)
    parts.extend(async_parts)
    token = ("i" if interactive else "") + ("p" if pending else "") + "".join(versions)
    if interactive:  # an open card's message brought up to date in place (the intake's
        # summary after a panel edit) is a new state: every tab re-renders it.
        token += "." + _digest(message.content)
    return RenderedMessage(mark_safe("".join(parts)), token, tuple(interactive))  # noqa: S308


def _async_parts(
    message: MessageInput,
    state: MessageState,
    draft: Draft | None,
    interactive: list[str],
    versions: list[str],
) -> tuple[list[str], bool]:
    """The cards of the message's `questionnaire_async` calls (from their tool results),
    and whether one still waits for its result."""
    parts: list[str] = []
    pending = False
    for call_id in async_calls(message.tool_calls):
        raw = message.tool_results.get(call_id)
        try:
            result = tool_result_questionnaire(raw, call_id=call_id)
        except Exception:
            logger.exception("message %s: tool result %s unreadable", message.id, call_id)
            parts.append(_render_error(message, raw or "", call_id))
            continue
        if isinstance(result, Questionnaire):
            parts.append(
                _guarded(
                    message,
                    raw or "",
                    call_id,
                    functools.partial(
                        _card_html, result, message, state, draft, interactive, versions
                    ),
                )
            )
        else:
            pending = pending or result is None
            view = ErrorCardView(
                dom_id=dom_id("qc", message.id, call_id),
                questionnaire_id=call_id,
                errors=result or (),
                pending=result is None,
            )
            parts.append(render_to_string(CARD_TEMPLATES["async_error"], {"card": view}))
    return parts, pending


def _digest(content: str) -> str:
    return hashlib.sha1(content.encode(), usedforsecurity=False).hexdigest()[:8]


def _guarded(message: MessageInput, raw: str, part: object, render: Callable[[], str]) -> str:
    try:
        return render()
    except Exception:
        logger.exception("message %s: part %s failed to render", message.id, part)
        return _render_error(message, raw, part)


def _render_error(message: MessageInput, raw: str, part: object) -> str:
    context = {"raw": raw, "dom_id": dom_id("qe", message.id, part)}
    return render_to_string(CARD_TEMPLATES["render_error"], context)


def _segments(message: MessageInput, lang: str) -> list[Segment] | None:
    """The message's segments, or None when it is plain Markdown to show as is."""
    if message.role == "assistant":
        text = message.display_content or message.content
        return parse_message(text, message_id=message.id, role="assistant", lang=lang)
    if message.role == "user" and message.content:
        segments = parse_message(message.content, message_id=message.id, role="user", lang=lang)
        if any(s.kind != "markdown" for s in segments):
            return segments
    return None


def _segment_html(
    segment: Segment,
    message: MessageInput,
    state: MessageState,
    markdown: Markdown,
    draft: Draft | None,
    interactive: list[str],
    versions: list[str],
) -> str:
    if isinstance(segment, MarkdownSegment):
        return markdown(segment.raw)
    if isinstance(segment, QuestionnaireSegment):
        return _card_html(segment.questionnaire, message, state, draft, interactive, versions)
    if isinstance(segment, ResponseSegment):
        context = {
            "segment": segment,
            "title": _answer_title(message),
            "rows": readable_answers(segment.payload),
            "declined": segment.payload.get("status") == "declined",
            "dom_id": dom_id("qr", message.id, segment.ordinal),
        }
        return render_to_string(CARD_TEMPLATES["response"], context)
    if isinstance(segment, InvalidSegment):
        context = {"segment": segment, "dom_id": dom_id("qi", message.id, segment.ordinal)}
        return render_to_string(CARD_TEMPLATES["invalid"], context)
    raise TypeError(f"no card template for segment kind {segment.kind!r}")


def _card_html(
    questionnaire: Questionnaire,
    message: MessageInput,
    state: MessageState,
    draft: Draft | None,
    interactive: list[str],
    versions: list[str],
) -> str:
    own_draft = (
        draft if draft and draft.questionnaire_id == questionnaire.questionnaire_id else None
    )
    view = card_view(questionnaire, message_id=message.id, state=state, draft=own_draft)
    if view.interactive:
        interactive.append(view.form_id)
    if view.version_state:
        versions.append(view.version_state)
    return render_to_string(CARD_TEMPLATES["questionnaire"], {"card": view})


def _answer_title(message: MessageInput) -> str:
    """The readable answer's first line is the questionnaire title (DESIGN §4.11)."""
    first = message.display_content.split("\n", 1)[0].strip()
    return first


def plain_markdown(text: str) -> str:
    """A Markdown stand-in that only escapes (the protocol playground's preview)."""
    return f'<div class="seg-plain">{escape(text)}</div>'
