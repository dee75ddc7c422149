"""View models for templates: everything a page needs, computed once, no queries in templates."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from django.db.models import Max
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import SafeString

from chat.core import selectors
from chat.core.models import Conversation, Message, Role
from chat.rendering import MarkdownBudget
from questionnaires.asks.presenters import state_panel_for
from questionnaires.drafts import drafts_for, inline_drafts
from questionnaires.inline import selectors as questionnaire_selectors
from questionnaires.inline.presenter import Draft, MessageInput, MessageState, async_calls
from questionnaires.inline.render import RenderedMessage, render_message, render_messages
from questionnaires.registry import Card, cards_for


@dataclass(frozen=True)
class MessageItem:
    """A message and its rendered body.  ``card_state`` marks cards that can still
    change (open tabs send it back, see ``message_items_changed``); ``form_ids`` are
    submittable card forms (the template adds their CSRF inputs, since the body HTML is
    cached); ``oob`` renders the article as an htmx out-of-band replacement."""

    message: Message
    html: SafeString
    card_state: str = ""
    form_ids: tuple[str, ...] = ()
    oob: bool = False
    cards: tuple[Card, ...] = ()  # attached cards of every registered kind

    @property
    def role(self) -> str:
        return self.message.role


def message_item(message: Message) -> MessageItem:
    """One message rendered read-only (admin previews)."""
    return _items(message.conversation, [message], interactive=False)[0]


def message_items(
    *,
    conversation: Conversation,
    after_seq: int = 0,
    draft: tuple[int, Draft] | None = None,
) -> list[MessageItem]:
    """The visible messages after ``after_seq``, rendered: segments first, Markdown for
    the Markdown segments, cards for the rest.  A ``draft`` (message id, Draft) shows a
    refused submit on its card with the user's selections kept."""
    messages = list(selectors.message_list_visible(conversation=conversation, after_seq=after_seq))
    return _items(conversation, messages, draft=draft)


def message_items_for(
    *, conversation: Conversation, messages: list[Message], draft: tuple[int, Draft] | None = None
) -> list[MessageItem]:
    return _items(conversation, messages, draft=draft)


def message_items_changed(*, conversation: Conversation, live: str) -> list[MessageItem]:
    """Out-of-band replacements for the cards an open tab reports as still live
    (``live`` = ``"<message id>:<card state>,..."``) whose state has changed since."""
    reported: dict[int, str] = {}
    for part in live.split(",")[:50]:
        pk, _sep, state = part.partition(":")
        if pk.isdigit():
            reported[int(pk)] = state
    if not reported:
        return []
    messages = list(
        selectors.message_list_visible(conversation=conversation).filter(pk__in=list(reported))
    )
    items = _items(conversation, messages)
    return [replace(i, oob=True) for i in items if i.card_state != reported.get(i.message.pk)]


def _items(
    conversation: Conversation,
    messages: list[Message],
    *,
    draft: tuple[int, Draft] | None = None,
    interactive: bool = True,
) -> list[MessageItem]:
    """Render with all state computed up front: at most three queries for any number of
    messages (answered cards, tool results, the latest answerable message)."""
    if not messages:
        return []
    call_ids = [c for m in messages if m.tool_calls for c in async_calls(m.tool_calls)]
    results = questionnaire_selectors.tool_results(
        conversation_id=conversation.pk, call_ids=call_ids
    )
    has_cards = any(m.role == Role.ASSISTANT for m in messages)
    answered = (
        questionnaire_selectors.answers_by_message(conversation_id=conversation.pk)
        if has_cards
        else {}
    )
    latest = (
        selectors.message_latest_visible_assistant_seq(conversation=conversation)
        if interactive and has_cards
        else None
    )
    saved = drafts_for(conversation=conversation) if latest is not None else {}
    inputs, states = [], []
    for m in messages:
        live = m.role == Role.ASSISTANT and not m.readonly and m.seq == latest
        url = reverse("chat:questionnaire_submit", args=[conversation.pk, m.pk]) if live else ""
        inputs.append(_input(m, results))
        own = inline_drafts(saved, message_id=m.pk, call_ids=async_calls(m.tool_calls or ()))
        states.append(
            MessageState(
                interactive=live,
                answered=answered.get(m.pk, {}),
                submit_url=url,
                drafts=own if live else {},
            )
        )
    lang = translation.get_language() or "en"
    rendered = render_messages(inputs, states, markdown=MarkdownBudget, lang=lang)
    if draft is not None:
        for index, m in enumerate(messages):
            if m.pk == draft[0]:
                rendered[index] = render_message(
                    inputs[index],
                    states[index],
                    markdown=MarkdownBudget,
                    lang=lang,
                    draft=draft[1],
                )
    cards = cards_for(conversation=conversation, messages=messages, drafts=saved)
    return [_item(m, r, cards.get(m.pk, ())) for m, r in zip(messages, rendered, strict=True)]


def _input(message: Message, results: dict[str, str]) -> MessageInput:
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


def _item(message: Message, rendered: RenderedMessage, cards: tuple[Card, ...]) -> MessageItem:
    # A live attached card adds its kind's letter to the state open tabs report back, so
    # they get it again, locked, once it is answered.
    state = rendered.card_state + "".join(c.state for c in cards)
    return MessageItem(message, rendered.html, state, rendered.form_ids, cards=cards)


def conversation_context(
    *, conversation: Conversation, form: Any, draft: tuple[int, Draft] | None = None
) -> dict[str, Any]:
    items = message_items(conversation=conversation, draft=draft)
    last_event_id = conversation.events.aggregate(m=Max("id"))["m"] or 0
    return {
        "conversation": conversation,
        "items": items,
        "form": form,
        "last_seq": items[-1].message.seq if items else 0,
        "last_event_id": last_event_id,
        "panel": state_panel_for(conversation=conversation),
        "run": selectors.run_latest(conversation=conversation),
    }
