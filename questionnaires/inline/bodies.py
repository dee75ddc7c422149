"""Message bodies, the inline kind's presenter (`Kind.body`): the chat's messages rendered
segment-first (`render.py`), with every inline card in its current state.

All state is read up front for the whole batch — answered cards, tool results, the latest
answerable message — so any number of messages costs the same few queries; rendering itself
touches no database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.urls import reverse
from django.utils import translation

from chat.core import selectors as core_selectors
from chat.core.models import Conversation, Message, Role
from chat.rendering import MarkdownBudget
from questionnaires.inline import selectors
from questionnaires.inline.presenter import (
    DRAFT_PREFIX,
    Answer,
    Draft,
    MessageInput,
    MessageState,
    async_calls,
)
from questionnaires.inline.render import render_message, render_messages
from questionnaires.registry import Body, Drafts, Refused


def message_input(message: Message, results: Mapping[str, str]) -> MessageInput:
    """The parts of a stored message the renderer reads."""
    calls = message.tool_calls or ()
    return MessageInput(
        id=message.pk,
        role=message.role,
        content=message.content,
        display_content=message.display_content,
        tool_calls=calls,
        tool_results={c: results[c] for c in async_calls(calls) if c in results} if calls else {},
        readonly=message.readonly,
    )


def inline_drafts(
    drafts: Drafts, *, message_id: int, call_ids: Sequence[str]
) -> dict[str, Mapping[str, Sequence[str]]]:
    """The drafts of one message's inline cards, by questionnaire id (`<message id>_qN`
    for blocks in its text, the tool call id for `questionnaire_async` cards)."""
    own: dict[str, Mapping[str, Sequence[str]]] = {}
    for key, fields in drafts.items():
        prefix, _sep, qid = key.partition(":")
        if prefix == DRAFT_PREFIX and (qid.startswith(f"{message_id}_q") or qid in call_ids):
            own[qid] = fields
    return own


def _state(
    conversation: Conversation,
    m: Message,
    drafts: Drafts,
    own_answers: Mapping[str, Answer],
    live: bool,
    changeable: bool,
) -> MessageState:
    """How message `m`'s cards render: open (`live`), answered, changeable, and its URLs."""
    answer_url = (
        reverse("chat:questionnaire_submit", args=[conversation.pk, m.pk])
        if live or changeable
        else ""
    )
    own = inline_drafts(drafts, message_id=m.pk, call_ids=async_calls(m.tool_calls or ()))
    return MessageState(
        interactive=live,
        answered=own_answers,
        submit_url=answer_url if live else "",
        drafts=own if live else {},
        answer_url=answer_url if changeable else "",
        change_url=(
            reverse("chat:questionnaire_change", args=[conversation.pk, m.pk]) if changeable else ""
        ),
        page_url=(
            reverse("chat:conversation", args=[conversation.pk]) + f"#msg-{m.pk}"
            if changeable
            else ""
        ),
    )


def inline_bodies(
    *,
    conversation: Conversation,
    messages: Sequence[Message],
    drafts: Drafts,
    interactive: bool,
    refused: Refused | None,
) -> list[Body]:
    """Every message's body; `refused` (a `Draft`) shows a refused submit on its card with
    the person's selections kept."""
    call_ids = [c for m in messages if m.tool_calls for c in async_calls(m.tool_calls)]
    results = core_selectors.tool_results(conversation_id=conversation.pk, call_ids=call_ids)
    has_cards = any(m.role == Role.ASSISTANT for m in messages)
    answered = selectors.answers_by_message(conversation_id=conversation.pk) if has_cards else {}
    latest = (
        core_selectors.message_latest_visible_assistant_seq(conversation=conversation)
        if interactive and has_cards
        else None
    )
    inputs, states = [], []
    for m in messages:
        own_answers = answered.get(m.pk, {})
        inputs.append(message_input(m, results))
        live = m.role == Role.ASSISTANT and not m.readonly and m.seq == latest
        # Answered cards of the person's own page can be changed (issue 27), on any message.
        changeable = interactive and bool(own_answers) and not m.readonly
        states.append(_state(conversation, m, drafts, own_answers, live, changeable))
    lang = translation.get_language() or "en"
    rendered = render_messages(inputs, states, markdown=MarkdownBudget, lang=lang)
    draft = refused.value if refused is not None else None
    for index, m in enumerate(messages):
        if isinstance(draft, Draft) and refused is not None and m.pk == refused.message_id:
            rendered[index] = render_message(
                inputs[index], states[index], markdown=MarkdownBudget, lang=lang, draft=draft
            )
    return [Body(r.html, r.card_state, r.form_ids) for r in rendered]
