"""The conversation page's view model: everything its templates need, computed once, no
queries in templates.

The page names no kind: message bodies, the cards attached to messages, how answers show,
side panels and what waits for the person all come from the kind registry
(`questionnaires.registry`), so a new way of asking shows here without a line changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db.models import Max
from django.forms import Form
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString
from django.utils.timesince import timesince
from django.utils.translation import gettext as _

from chat.core import selectors
from chat.core.agents import agent_label
from chat.core.errors import ChatError
from chat.core.metadata import metadata_of
from chat.core.models import Conversation, Message, Role
from chat.inbox.selectors import Badge, inbox_badge
from chat.rendering import markdown_to_html
from questionnaires import registry
from questionnaires.drafts import drafts_for
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.registry import AnswerSummary, Body, Card, Refused
from questionnaires.repair.presenter import prompt_for


@dataclass(frozen=True)
class MessageItem:
    """A message and its rendered body. ``card_state`` marks cards that can still change
    (open tabs send it back, see ``message_items_changed``); ``form_ids`` are submittable
    card forms in the body (the template adds their CSRF inputs, since the body HTML is
    cached); ``oob`` renders the article as an htmx out-of-band replacement."""

    message: Message
    html: SafeString  # the body, or the answer summary's own HTML
    card_state: str = ""
    form_ids: tuple[str, ...] = ()
    oob: bool = False
    cards: tuple[Card, ...] = ()  # attached cards of every registered kind
    # Set when the message answers a card: the page shows it right after that card (a turn
    # may ask two questions before either is answered; messages are numbered in that order).
    answer: AnswerSummary | None = None

    @property
    def role(self) -> str:
        return self.message.role

    @property
    def stopped(self) -> bool:
        """The text streamed before the person pressed Stop (kept, marked as stopped)."""
        return self.role == Role.ASSISTANT and metadata_of(self.message).get("kind") == "stopped"

    @property
    def answers_key(self) -> str:
        return self.answer.key if self.answer else ""

    @property
    def answer_key(self) -> str:
        """The key answers to this message's cards carry ("" when order doesn't matter)."""
        return next((c.view.answer_key for c in self.cards if c.view.answer_key), "")


@dataclass(frozen=True)
class RefusalView:
    """Input refused because a card waits: the waiting kind's way out, shown where the
    person typed (the composer, a slot edit)."""

    template: str
    details: dict[str, JsonValue]
    message: str = ""


def refusal_view(error: ChatError) -> RefusalView | None:
    if isinstance(error, registry.InputRefused) and error.kind.refusal_template:
        return RefusalView(error.kind.refusal_template, error.details, error.message)
    return None


def refusal_current(*, conversation: Conversation) -> RefusalView | None:
    """The composer's refusal as it stands now: the first waiting card's way out, or None
    once nothing waits (a refusal shown in an open tab never outlives its cause: the tab
    asks again on every card and run event, DESIGN §4.14)."""
    for error in registry.waiting(conversation=conversation):
        view = refusal_view(error)
        if view is not None:
            return view
    return None


def message_item(message: Message) -> MessageItem:
    """One message rendered read-only (admin previews)."""
    return _items(message.conversation, [message], interactive=False)[0]


def message_items(
    *, conversation: Conversation, after_seq: int = 0, refused: Refused | None = None
) -> list[MessageItem]:
    """The visible messages after ``after_seq``, rendered. ``refused`` shows a refused
    answer on its card, with what the person chose."""
    messages = list(selectors.message_list_visible(conversation=conversation, after_seq=after_seq))
    if after_seq and messages:
        # A live tab's fetch: the state as new as the messages just read (a turn writes a
        # message and the state that marks it in one transaction; the conversation was
        # loaded before, so its summary could render without its marker).
        conversation.refresh_from_db(fields=["state"])
    return _items(conversation, messages, refused=refused)


def message_items_for(
    *, conversation: Conversation, messages: list[Message], refused: Refused | None = None
) -> list[MessageItem]:
    return _items(conversation, messages, refused=refused)


def message_items_changed(
    *, conversation: Conversation, live: Mapping[int, str]
) -> list[MessageItem]:
    """Out-of-band replacements for the cards an open tab reports as still live
    (``live`` = message id → the card state it shows) whose state has changed since."""
    if not live:
        return []
    messages = list(
        selectors.message_list_visible(conversation=conversation).filter(pk__in=list(live))
    )
    items = _items(conversation, messages)
    return [replace(i, oob=True) for i in items if i.card_state != live.get(i.message.pk)]


def _items(
    conversation: Conversation,
    messages: list[Message],
    *,
    refused: Refused | None = None,
    interactive: bool = True,
) -> list[MessageItem]:
    """Render with all state computed up front: a fixed number of queries for any number of
    messages (each kind reads its cards for the whole batch at once)."""
    if not messages:
        return []
    drafts = drafts_for(conversation=conversation) if interactive else {}
    bodies = _bodies(conversation, messages, drafts, interactive, refused)
    cards = registry.cards_for(conversation=conversation, messages=messages, drafts=drafts)
    items = []
    for message, body in zip(messages, bodies, strict=True):
        own = _with_refused(cards.get(message.pk, ()), message.pk, refused)
        answer = registry.answer_summary(message) if message.role == Role.USER else None
        items.append(
            MessageItem(
                message,
                answer.html if answer and answer.html is not None else body.html,
                body.live_state + "".join(c.view.live_state for c in own),
                body.form_ids,
                cards=own,
                answer=answer,
            )
        )
    return answers_after_questions(items)


def _bodies(
    conversation: Conversation,
    messages: list[Message],
    drafts: registry.Drafts,
    interactive: bool,
    refused: Refused | None,
) -> list[Body]:
    kind = registry.body_kind()
    if kind is None or kind.body is None:  # no kind renders bodies: Markdown as is
        return [Body(markdown_to_html(m.shown_content)) for m in messages]
    own = refused if refused is not None and refused.kind == kind.name else None
    return list(
        kind.body(
            conversation=conversation,
            messages=messages,
            drafts=drafts,
            interactive=interactive,
            refused=own,
        )
    )


def _with_refused(
    cards: tuple[Card, ...], message_id: int, refused: Refused | None
) -> tuple[Card, ...]:
    """A refused answer's card (the kind's view with the error and what was typed) in place
    of the same card as stored."""
    if refused is None or refused.message_id != message_id:
        return cards
    if not isinstance(refused.value, registry.CardView):
        return cards
    view = refused.value
    return tuple(Card(c.kind, view) if c.kind == refused.kind else c for c in cards) or (
        Card(refused.kind, view),
    )


def answers_after_questions(items: list[MessageItem]) -> list[MessageItem]:
    """Move each answer right after the card it answers (when both are here; the first
    answer of a card, should there be two); static/js/chat.js does the same for answers
    that arrive live."""
    targets = {i.answer_key for i in items if i.answer_key}
    answers: dict[str, MessageItem] = {}
    for i in items:
        if i.answers_key and i.answers_key in targets:
            answers.setdefault(i.answers_key, i)
    if not answers:
        return items
    ordered: list[MessageItem] = []
    for item in items:
        if item.answers_key in answers and answers[item.answers_key] is item:
            continue
        ordered.append(item)
        if item.answer_key in answers:
            ordered.append(answers[item.answer_key])
    return ordered


def conversation_page(
    *,
    conversation: Conversation,
    form: Form,
    refused: Refused | None = None,
    refusal: RefusalView | None = None,
) -> dict[str, object]:
    """The conversation page's context (templates/chat/conversation.html)."""
    # Read the stream position and the run BEFORE the messages: whatever commits in between
    # is then replayed by the stream (its events are after `last_event_id`) and, without
    # JavaScript, fetched by the refresh (the run still looked active). Read after them, a
    # reply that committed in between was on neither path.
    last_event_id = conversation.events.aggregate(m=Max("id"))["m"] or 0
    run = selectors.run_latest(conversation=conversation)
    waits = registry.waiting(conversation=conversation)
    items = message_items(conversation=conversation, refused=refused)
    return {
        "conversation": conversation,
        "items": items,
        "form": form,
        "last_seq": items[-1].message.seq if items else 0,
        "last_event_id": last_event_id,
        "panel": registry.panel_for(conversation=conversation),
        "run": run,
        "waiting_for_person": any(w.kind.run_effect is registry.RunEffect.HOLDS_RUN for w in waits),
        "refusal": refusal,
        "sidebar": sidebar(user=conversation.owner, current_id=conversation.pk),
        "repair_prompt": prompt_for(conversation),  # issue 36: a filled or re-asked question
    }


def shell_update(
    *, conversation: Conversation, had_panel: bool, query: str = ""
) -> dict[str, object]:
    """What changes around the thread after a message (templates/chat/_shell_update.html):
    the title, the panel's summary, the sidebar's list, and a panel that appeared in a tab
    that had none (`had_panel`)."""
    return {
        "conversation": conversation,
        "panel": registry.panel_for(conversation=conversation),
        "had_panel": had_panel,
        "sidebar": sidebar(user=conversation.owner, current_id=conversation.pk, query=query),
        "page_url": reverse("chat:conversation", args=[conversation.pk]),
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


@dataclass(frozen=True)
class SidebarGroup:
    label: str
    entries: list[SidebarEntry]


@dataclass(frozen=True)
class Sidebar:
    groups: list[SidebarGroup]
    query: str
    current_id: int | None
    inbox: Badge | None = None  # the inbox link's count (chat.inbox)


def sidebar(*, user: User, current_id: int | None = None, query: str = "") -> Sidebar:
    """The user's conversations, newest first, grouped Today / Yesterday / Previous 7 days
    / Earlier, each with a relative date; ``query`` searches titles and message text
    (`selectors.conversation_search_for_user`)."""
    now = timezone.localtime()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    bounds = [
        (today, _("Today")),
        (today - timedelta(days=1), _("Yesterday")),
        (today - timedelta(days=7), _("Previous 7 days")),
    ]
    groups: list[SidebarGroup] = []
    found = selectors.conversation_search_for_user(user=user, query=query)
    for conversation in found[:SIDEBAR_LIMIT]:
        title = str(conversation)
        updated = timezone.localtime(conversation.updated_at)
        label = next((name for start, name in bounds if updated >= start), _("Earlier"))
        if not groups or groups[-1].label != label:
            groups.append(SidebarGroup(label, []))
        groups[-1].entries.append(
            SidebarEntry(
                pk=conversation.pk,
                title=title,
                agent=agent_label(conversation.agent),
                updated_at=updated,
                when=_relative(updated, now),
                active=conversation.pk == current_id,
            )
        )
    return Sidebar(groups, query, current_id, inbox_badge(user=user))


def _relative(moment: datetime, now: datetime) -> str:
    if now - moment < timedelta(minutes=1):
        return _("just now")
    return _("%(time)s ago") % {"time": timesince(moment, now, depth=1)}
