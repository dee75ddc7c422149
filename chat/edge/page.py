"""View models for templates: everything a page needs, computed once, no queries in templates."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Max
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.timesince import timesince
from django.utils.translation import gettext as _

from chat.core import selectors
from chat.core.models import Conversation, Message, Role
from chat.rendering import MarkdownBudget
from questionnaires.asks.presenters import state_panel_for
from questionnaires.drafts import drafts_for, inline_drafts
from questionnaires.elicitations.selectors import elicitation_pending
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
    # A structured answer names its ask ("<turn id>:<field>"): the page shows each answer
    # right after its question, although a turn may ask two questions before either is
    # answered (messages are created, and numbered, in that order).
    answers_key: str = ""
    # The intake's summary card: "Which answers should change?" shows only after "I want to
    # change something" (CSS, static/css/cards.css).
    intake_confirm: bool = False

    @property
    def ask(self) -> Any:
        """The item's ask widget (questionnaires.asks.presenters.AskView), if any."""
        return next((c.view for c in self.cards if c.kind == "ask"), None)

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
    results = selectors.tool_results(conversation_id=conversation.pk, call_ids=call_ids)
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
    items = [_item(m, r, cards.get(m.pk, ())) for m, r in zip(messages, rendered, strict=True)]
    summary = str((conversation.state or {}).get("intake", {}).get("summary_questionnaire_id", ""))
    if summary:
        items = [
            replace(i, intake_confirm=True) if summary == f"{i.message.pk}_q1" else i for i in items
        ]
    return answers_after_questions(items)


def ask_key(item: MessageItem) -> str:
    ask = item.ask
    return f"{ask.turn_id}:{ask.ask.get('field', '')}" if ask else ""


def answers_after_questions(items: list[MessageItem]) -> list[MessageItem]:
    """Move each structured answer right after the ask it answers (when both are here);
    static/js/chat.js does the same for answers that arrive live."""
    asks = {ask_key(i) for i in items if i.ask}
    if not any(i.answers_key in asks for i in items if i.answers_key):
        return items
    answers = {i.answers_key: i for i in items if i.answers_key in asks}
    ordered: list[MessageItem] = []
    for item in items:
        if item.answers_key in answers:
            continue
        ordered.append(item)
        if item.ask and ask_key(item) in answers:
            ordered.append(answers[ask_key(item)])
    return ordered


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
    item = MessageItem(message, rendered.html, state, rendered.form_ids, cards=cards)
    answer = (message.metadata or {}).get("structured_answer")
    if message.role != Role.USER or not isinstance(answer, dict):
        return item
    key = f"{answer.get('turn_id', '')}:{answer.get('field', '')}"
    if answer.get("source") == "user_skipped":
        # The model reads "Skipped: <question>"; the chat shows a short line under the
        # question itself.
        html = format_html('<p class="answer-skipped">{}</p>', _("Skipped"))
        return replace(item, html=html, answers_key=key)
    return replace(item, answers_key=key)


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
        "waiting_for_person": elicitation_pending(conversation_id=conversation.pk) is not None,
        "sidebar": sidebar(user=conversation.owner, current_id=conversation.pk),
    }


# --- the conversation list in the sidebar --------------------------------------------------

SIDEBAR_LIMIT = 200


@dataclass(frozen=True)
class SidebarEntry:
    pk: int
    title: str
    agent: str
    updated_at: datetime
    when: str
    active: bool

    @property
    def url(self) -> str:
        return reverse("chat:conversation", args=[self.pk])


def sidebar(*, user: Any, current_id: int | None = None, query: str = "") -> dict[str, Any]:
    """The user's conversations, newest first, grouped Today / Yesterday / Previous 7 days
    / Earlier, each with a relative date; ``query`` filters by title (no-JS search; with
    JavaScript the list filters as you type)."""
    now = timezone.localtime()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    bounds = [
        (today, _("Today")),
        (today - timedelta(days=1), _("Yesterday")),
        (today - timedelta(days=7), _("Previous 7 days")),
    ]
    groups: list[dict[str, Any]] = []
    needle = query.strip().casefold()
    for conversation in selectors.conversation_list_for_user(user=user)[:SIDEBAR_LIMIT]:
        title = str(conversation)
        if needle and needle not in title.casefold():
            continue
        updated = timezone.localtime(conversation.updated_at)
        label = next((name for start, name in bounds if updated >= start), _("Earlier"))
        if not groups or groups[-1]["label"] != label:
            groups.append({"label": label, "entries": []})
        groups[-1]["entries"].append(
            SidebarEntry(
                pk=conversation.pk,
                title=title,
                agent=conversation.get_agent_display(),
                updated_at=updated,
                when=_relative(updated, now),
                active=conversation.pk == current_id,
            )
        )
    return {"groups": groups, "query": query, "current_id": current_id}


def _relative(moment: datetime, now: datetime) -> str:
    if now - moment < timedelta(minutes=1):
        return _("just now")
    return _("%(time)s ago") % {"time": timesince(moment, now, depth=1)}


def llm_configured() -> bool:
    """Whether the OpenAI-compatible agent can work (the condition chat.runs.turn checks)."""
    return bool(settings.LLM_BASE_URL or settings.LLM_API_KEY)
