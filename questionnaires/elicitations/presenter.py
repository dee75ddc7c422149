"""View models of elicitation cards, computed before rendering (one query per batch)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from chat.core.models import Conversation, Message
from chat.core.selectors import tool_results
from questionnaires.elicitations.links import Link, link_of
from questionnaires.elicitations.models import Elicitation, ElicitationStatus
from questionnaires.elicitations.selectors import elicitations_by_message, fields_of
from questionnaires.protocol.elicitation_form import FieldView, answer_rows, field_views
from questionnaires.registry import CardChrome, CardState, Drafts


@dataclass(frozen=True)
class ElicitationDraft:
    """A refused submit: what was typed (`answer-<field>` → values) and the messages."""

    values: Mapping[str, Sequence[str]] = field(default_factory=dict)
    fields: Mapping[str, str] = field(default_factory=dict)
    error: str = ""


DRAFT_PREFIX = "elic"
OUTCOME_MAX = 2000  # characters of the tool's result shown on the card
TITLE_MAX = 120  # a prompt longer than this shows under a generic title


@dataclass(frozen=True)
class ToolOutcome:
    """What the tool that asked finally returned (what the model got), shown on the locked
    card so the person sees what their answer led to — with and without JavaScript."""

    ok: bool
    text: str


def tool_outcome(content: str) -> ToolOutcome | None:
    """The readable part of a stored MCP tool result (chat.mcphost.tools shapes)."""
    try:
        data = json.loads(content)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if data.get("success") is False:
        return ToolOutcome(False, str(data.get("message") or "")[:OUTCOME_MAX])
    parts = data.get("content")
    texts = [
        str(p.get("text", ""))
        for p in (parts if isinstance(parts, list) else [])
        if isinstance(p, dict) and p.get("type") == "text"
    ]
    text = "\n".join(t for t in texts if t)
    return ToolOutcome(True, text[:OUTCOME_MAX]) if text else None


@dataclass(frozen=True)
class ElicitationCard:
    id: int
    conversation_id: int
    message_id: int
    server_name: str
    tool_name: str
    mode: str
    prompt: str
    status: str  # as stored, except a pending one past its time shows "expired"
    expires_at: datetime
    fields: tuple[FieldView, ...] = ()
    answers: tuple[tuple[str, str], ...] = ()
    typed: tuple[tuple[str, str], ...] = ()  # an expired / cancelled card's draft
    url: Link | None = None  # URL mode: the link as a browser reads it
    openable: bool = False
    refused_reason: str = ""
    error: str = ""
    outcome: ToolOutcome | None = None
    # Locked while its tool call is still running: open tabs fetch it again for the result.
    awaiting_result: bool = False

    @property
    def answerable(self) -> bool:
        return self.status == ElicitationStatus.PENDING

    @property
    def state_letter(self) -> str:
        """ "e" while answerable, "u" while an opened link waits for its completion, "r"
        while the tool that asked has not returned yet."""
        if self.answerable:
            return "e"
        if self.mode == "url" and self.status == ElicitationStatus.ACCEPTED:
            return "u"
        return "r" if self.awaiting_result else ""

    @property
    def dom_id(self) -> str:
        return f"elic-{self.id}"

    @property
    def draft_key(self) -> str:
        return card_key(self.id)

    @property
    def live_state(self) -> str:
        return self.state_letter

    @property
    def answer_key(self) -> str:
        return ""

    @property
    def submit_url(self) -> str:
        return reverse("chat:elicitation_answer", args=[self.conversation_id, self.id])

    @property
    def expires_iso(self) -> str:
        return self.expires_at.isoformat()

    @property
    def title(self) -> str:
        """The server's question when it is one short line, else a generic title (the
        prompt then shows under it in full)."""
        prompt = " ".join(self.prompt.split())
        if prompt and "\n" not in self.prompt.strip() and len(prompt) <= TITLE_MAX:
            return prompt
        if self.mode == "url":
            return _("Open a link to continue")
        return _("A few details, please")

    @property
    def prompt_below(self) -> bool:
        return bool(self.prompt.strip()) and self.title != " ".join(self.prompt.split())

    @property
    def chrome(self) -> CardChrome:
        chips: dict[str, str] = {
            ElicitationStatus.ACCEPTED: _("Opened") if self.mode == "url" else _("Answered"),
            ElicitationStatus.COMPLETED: _("Answered"),
            ElicitationStatus.DECLINED: _("Declined"),
            ElicitationStatus.CANCELLED: _("Cancelled"),
            ElicitationStatus.EXPIRED: _("Expired"),
            ElicitationStatus.REFUSED: _("Not shown"),
        }
        state: CardState
        if self.answerable:
            state = "open"
        elif self.status in (ElicitationStatus.ACCEPTED, ElicitationStatus.COMPLETED):
            state = "answered"
        else:
            state = "closed"
        return CardChrome(
            dom_id=self.dom_id,
            title=self.title,
            state=state,
            chip="" if self.answerable else chips.get(self.status, _("Stopped")),
            source=f"{self.server_name} · MCP",
            # No user turn carries an MCP answer: the folded card says it, once.
            # Each value with its label ("Newsletter: No", never a bare "No").
            summary=" · ".join(
                _("%(label)s: %(value)s") % {"label": label, "value": value}
                for label, value in self.answers
                if value
            ),
        )


def elicitation_cards_for(
    *,
    conversation: Conversation,
    messages: Sequence[Message],
    drafts: Drafts | None = None,
    draft: ElicitationDraft | None = None,
) -> dict[int, list[ElicitationCard]]:
    """Elicitation cards by message id (the registry's presenter). `draft` (a refused
    submit) applies to a pending card."""
    rows = elicitations_by_message(message_ids=[m.pk for m in messages])
    # The result goes on the last card of its tool call (a server may ask more than once).
    last = {row.tool_call_id: row.pk for row in sorted(rows.values(), key=lambda r: r.pk)}
    results = tool_results(conversation_id=conversation.pk, call_ids=last)
    cards: dict[int, list[ElicitationCard]] = {}
    for message_id, row in rows.items():
        card = elicitation_card(row, drafts=drafts or {}, draft=draft)
        content = results.get(row.tool_call_id)
        if last.get(row.tool_call_id) == row.pk and not card.answerable:
            if content is not None:
                card = replace(card, outcome=tool_outcome(content))
            elif row.run is not None and row.run.status in ("queued", "running", "suspended"):
                card = replace(card, awaiting_result=True)
        cards[message_id] = [card]
    return cards


def elicitation_card(
    row: Elicitation, *, drafts: Drafts | None = None, draft: ElicitationDraft | None = None
) -> ElicitationCard:
    status = row.status
    if status == ElicitationStatus.PENDING and row.expires_at <= timezone.now():
        status = ElicitationStatus.EXPIRED
    card = ElicitationCard(
        id=row.pk,
        conversation_id=row.conversation_id,
        message_id=row.message_id,
        server_name=row.server_name,
        tool_name=row.tool_name,
        mode=row.mode,
        prompt=row.prompt,
        status=status,
        expires_at=row.expires_at,
        refused_reason=row.refused_reason,
        error=draft.error if draft else "",  # a refusal says why, on any state
    )
    if row.mode == "url":
        link = link_of(row.url)
        return replace(card, url=link, openable=link.openable)
    if status == ElicitationStatus.REFUSED:
        return card
    fields = fields_of(row)
    saved = (drafts or {}).get(card_key(row.pk))
    typed = {k.removeprefix("answer-"): v for k, v in (saved or {}).items()}
    if draft is not None:
        typed = {k.removeprefix("answer-"): list(v) for k, v in draft.values.items()}
    if status == ElicitationStatus.PENDING:
        lang = translation.get_language() or "en"
        views = field_views(fields, prefix=card.dom_id, values=typed or None, lang=lang)
        if draft is not None:
            errors = draft.fields
            views = tuple(replace(v, error=errors.get(v.name[7:], "")) for v in views)
        return replace(card, fields=views)
    if status in (ElicitationStatus.ACCEPTED, ElicitationStatus.COMPLETED):
        rows = answer_rows(fields, row.content or {}, yes=_("Yes"), no=_("No"))
        return replace(card, answers=rows)
    shown = tuple((f.title, ", ".join(typed[f.name])) for f in fields if any(typed.get(f.name, ())))
    return replace(card, typed=shown)


def card_key(elicitation_id: int) -> str:
    """The card's draft key (questionnaires.drafts)."""
    return f"{DRAFT_PREFIX}:{elicitation_id}"
