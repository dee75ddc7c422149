"""View models for ask widgets and the consultation-state panel (no queries in templates)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from chat.core.agents import agent_get
from chat.core.metadata import AskPayload, AskStart, intake_state, metadata_of, state_of
from chat.core.models import Conversation, Message, Role
from questionnaires.asks import selectors
from questionnaires.asks.definitions import Definition, Slot, conversation_definition
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.state import state_view
from questionnaires.protocol.ask_payload import ask_widget, form_value
from questionnaires.protocol.ask_reference import reference_or_none
from questionnaires.protocol.jsontypes import Json
from questionnaires.registry import AnswerSummary, CardChrome, CardState, Drafts, Panel
from questionnaires.repair.selectors import carried_refs

DRAFT_PREFIX = "ask"
UNSURE_BELOW = 0.8  # a slot read with less confidence shows "Please check"


@dataclass(frozen=True)
class OptionView:
    """An offered option as a widget shows it; `form_value` is what its form posts."""

    label: str
    icon: str
    form_value: str


# Option icons drawn by the app (monochrome SVG, static/css/shell.css `.i-NAME`): an ask
# may name one of these instead of an emoji (the bundled definitions and the tour do).
ICONS = frozenset(
    {
        "arrow-left", "arrow-right", "arrows", "check", "level-1", "level-2", "level-3",
        "globe", "phone", "wrench", "chart", "flask", "star", "smile", "help",
    }
)  # fmt: skip


def option_icon(icon: str) -> str:
    """An option's icon as the widget shows it: a named one is the app's own drawing (a
    CSS mask, no markup of the ask's); anything else (an emoji) is text."""
    if icon in ICONS:
        return format_html('<span class="i i-{}" aria-hidden="true"></span>', icon)
    return icon


def option_views(ask: AskPayload | None) -> list[OptionView]:
    options = ask.get("options", []) if ask is not None else []
    return [
        OptionView(o["label"], option_icon(o.get("icon", "")), form_value(o["value"]))
        for o in options
    ]


@dataclass(frozen=True)
class AskView:
    """Context of `chat/asks/<widget>.html`."""

    conversation_id: int
    message_id: int
    turn_id: str
    ask: AskPayload
    widget: str
    answerable: bool
    answer: StructuredAnswer | None = None
    error: str = ""
    typed: str = ""
    options: list[OptionView] = field(default_factory=list)
    reference: dict[str, str] | None = None  # the "Why we ask" knowledge reference
    queued: bool = False  # open, but another question of its turn comes first
    changing: bool = False  # the response to a "Change answer" of this ask
    # a scale's start read from the person's earlier words, and those words
    start: AskStart | None = None

    @property
    def template(self) -> str:
        return f"chat/asks/{self.widget}.html"

    @property
    def dom_id(self) -> str:
        return f"ask-{self.message_id}"

    @property
    def draft_key(self) -> str:
        return f"{DRAFT_PREFIX}:{self.message_id}"

    @property
    def live_state(self) -> str:
        """ "" while open or queued (an open widget refreshes itself, keeping what the
        person types); closed without an answer, "c": its answer may still come (words
        typed in the composer), and the tab's message list then brings it; once answered,
        the answer's version, so a change in another tab reaches this one. (The widget
        carries it too, `data-card-live`: a widget that closed itself is followed.)"""
        if self.answer is not None:
            return f"v{self.answer.pk}"
        return "" if self.answerable else "c"

    @property
    def changeable(self) -> bool:
        """ "Change answer" (issue 27): an answered ask of the person's own page."""
        return self.answer is not None and bool(self.options or self.ask.get("allow_free_text"))

    @property
    def change_refused(self) -> bool:
        """A "Change answer" refused on an answered ask, or a stale tab's typed answer
        refused because another tab answered: the card stays open on the change form, with
        what the person typed and the reason. (A stale tab's click loses nothing: the card
        folds on the answer that counts, the reason under it.)"""
        return self.answer is not None and bool(self.error) and (self.changing or bool(self.typed))

    @property
    def answer_key(self) -> str:
        """Answers carry it too (`answer_summary`): two asks of a turn may be answered in
        either order, and each answer shows under its own question."""
        return f"{self.turn_id}:{self.ask.get('field', '')}"

    @property
    def chrome(self) -> CardChrome:
        state: CardState
        if self.answer is not None:
            state = "answered"
        elif self.answerable:
            state = "waiting" if self.queued else "open"
        else:
            state = "closed"
        skipped = self.answer is not None and self.answer.source == "user_skipped"
        chips = {"answered": _("Skipped") if skipped else _("Answered"), "closed": _("Closed")}
        if self.answer is not None and self.answer.amends_id is not None:
            chips["answered"] = _("Changed")
        return CardChrome(
            dom_id=self.dom_id,
            title=self.ask.get("question", ""),
            state=state,
            chip=chips.get(state, ""),
            skipped=skipped,
            notice=self.error if not self.answerable or self.answer is not None else "",
            unfolded=self.change_refused,
        )

    @property
    def chosen(self) -> str:
        """The form value of the chosen option (an answered ask), "" for free text."""
        if self.answer is None or self.answer.value is None:
            return ""
        return form_value(self.answer.value)

    @property
    def scale_start(self) -> int | float:
        """Where the slider starts: what the person already said (`start`), else the
        middle of the scale, on a step."""
        low, high, step = self.ask["min"], self.ask["max"], self.ask["step"]
        if self.start is not None and low <= self.start["value"] <= high:
            value = self.start["value"]
            return int(value) if float(value).is_integer() else value
        middle = low + round((high - low) / 2 / step) * step
        return int(middle) if float(middle).is_integer() else middle


def ask_view(
    message: Message,
    *,
    answerable: bool,
    answer: StructuredAnswer | None,
    error: str = "",
    typed: str = "",
) -> AskView:
    meta = metadata_of(message)
    ask = meta.get("ask_user_options") or {}
    return AskView(
        conversation_id=message.conversation_id,
        message_id=message.pk,
        turn_id=meta.get("turn_id", ""),
        ask=ask,
        widget=ask_widget(ask),
        answerable=answerable and answer is None,
        answer=answer,
        error=error,
        typed=typed,
        options=option_views(ask),
        reference=reference_or_none(meta.get("knowledge_reference")),
        start=meta.get("ask_start"),
    )


def ask_views(
    *, conversation: Conversation, messages: Sequence[Message], drafts: Drafts | None = None
) -> dict[int, AskView]:
    """The ask widgets of `messages` (a tail of the conversation), by message id. Of the
    open asks of a turn only the first unanswered one is shown open: the others are queued
    (one question at a time) and open when it is answered."""
    ask_messages = [m for m in messages if selectors.is_ask(m)]
    if not ask_messages:
        return {}
    # Answerability depends on what follows an ask, so read the conversation's own tail
    # (the given messages may be a subset).
    tail = list(conversation.messages.order_by("-seq")[:30])[::-1]
    open_ids = selectors.latest_turn_asks(tail)
    # Asks that still wait after the person digressed stay open (conversation repair,
    # issue 36: the question is also shown again below the reply).
    open_ids |= {
        int(ref.partition(":")[2])
        for ref in carried_refs(conversation_id=conversation.pk, kind="ask")
        if ref.partition(":")[2].isdigit()
    }
    answers = selectors.answers_by_ask(conversation=conversation)
    waiting = [m.pk for m in tail if m.pk in open_ids and m.pk not in answers]
    first = waiting[0] if waiting else None
    drafts = drafts or {}
    return {
        m.pk: replace(
            ask_view(
                m,
                answerable=m.pk in open_ids,
                answer=answers.get(m.pk),
                typed=_typed(drafts.get(f"{DRAFT_PREFIX}:{m.pk}")) if m.pk in open_ids else "",
            ),
            queued=m.pk in waiting and m.pk != first,
        )
        for m in ask_messages
    }


def _typed(fields: Mapping[str, Sequence[str]] | None) -> str:
    values = (fields or {}).get("text") or [""]
    return values[-1]


def ask_view_single(
    *,
    conversation: Conversation,
    message: Message,
    error: str = "",
    typed: str = "",
    changing: bool = False,
) -> AskView:
    """One ask as it stands (an answer's or a change's response, a tab's refresh)."""
    view = ask_views(conversation=conversation, messages=[message])[message.pk]
    return replace(view, error=error, typed=typed or view.typed, changing=changing)


@dataclass(frozen=True)
class SlotRow:
    field: str
    label: str
    filled: bool
    skipped: bool
    missing: bool
    display: str
    confidence: float | None
    raw_text: str
    ask: AskPayload | None
    options: list[OptionView]
    current: str

    @property
    def confidence_percent(self) -> int | None:
        return None if self.confidence is None else round(self.confidence * 100)

    @property
    def unsure(self) -> bool:
        """Read from free words with some doubt: people are asked to check it (the
        figure itself is for developers)."""
        return self.confidence is not None and self.confidence < UNSURE_BELOW


@dataclass(frozen=True)
class StatePanel:
    """Context of the consultation-state panel (`panel`): one row per known field."""

    conversation: Conversation
    slots: list[SlotRow]
    definition: Definition | None
    status: str
    filled_count: int


def state_panel(*, conversation: Conversation) -> StatePanel:
    """The consultation-state panel: one row per known field."""
    view = state_view(state_of(conversation))
    definition = conversation_definition(conversation)
    labels = {s.field: s.label for s in definition.slots} if definition else {}
    order = list(labels)
    for name in [*view["consultation_state"], *view["missing_slots"], *view["skipped_slots"]]:
        if name not in order:
            order.append(name)
    values = view["consultation_state"]
    # Every slot of the definition has its row from the start ("Not answered yet"), so the
    # count's total stays put as answers come in; only a slot an answer rules out (a
    # deadline's date after "no fixed deadline") leaves.
    due = {s.field for s in definition.slots if not _ruled_out(s, values)} if definition else set()
    rows = []
    for name in order:
        filled = name in values
        missing, skipped = name in view["missing_slots"], name in view["skipped_slots"]
        if not (filled or skipped):
            missing = missing or name in due
        if not (filled or missing or skipped):
            continue
        ask = selectors.ask_for_field(conversation=conversation, field=name)
        value = view["consultation_state"].get(name)
        rows.append(
            SlotRow(
                field=name,
                label=labels.get(name) or (ask or {}).get("question") or name,
                filled=filled,
                skipped=skipped and not filled,
                missing=missing,
                display=str(view["display"].get(name, value if filled else "")),
                confidence=view["confidence"].get(name) if filled else None,
                raw_text=view["raw_text"].get(name, ""),
                ask=ask,
                options=option_views(ask),
                current=form_value(value) if filled else "",
            )
        )
    status = intake_state(conversation).get("status", "")
    return StatePanel(conversation, rows, definition, status, sum(1 for r in rows if r.filled))


def _ruled_out(slot: Slot, values: Mapping[str, Json]) -> bool:
    """A slot whose condition's question is answered, and not so that it applies."""
    if not slot.when:
        return False
    return str(slot.when["field"]) in values and not slot.applies(values)


def ask_cards_for(
    *, conversation: Conversation, messages: Sequence[Message], drafts: Drafts
) -> dict[int, list[AskView]]:
    """The registry's presenter: each ask message's widget."""
    views = ask_views(conversation=conversation, messages=messages, drafts=drafts)
    return {pk: [view] for pk, view in views.items()}


def state_panel_for(conversation: Conversation) -> Panel | None:
    """The state panel for conversations that collect structured state, else None."""
    state = state_of(conversation)
    agent = agent_get(conversation.agent)
    collects = agent is not None and agent.collects_state  # (the intake: from the start)
    if not collects and not any(k in state for k in ("consultation_state", "missing_slots")):
        return None
    panel = state_panel(conversation=conversation)
    definition = panel.definition
    title = definition.title if definition is not None else _("Collected information")
    answered = sum(1 for row in panel.slots if row.filled or row.skipped)
    summary = ngettext(
        "%(done)s of %(total)s answered", "%(done)s of %(total)s answered", len(panel.slots)
    ) % {"done": answered, "total": len(panel.slots)}
    return Panel("chat/asks/state_panel.html", panel, title=title, summary=summary)


def answer_summary(message: Message) -> AnswerSummary | None:
    """An answer to an ask shows right under its question; a skip as a short line (the
    model reads "Skipped: <question>")."""
    answer = metadata_of(message).get("structured_answer")
    if answer is None:
        return None
    key = f"{answer.get('turn_id', '')}:{answer.get('field', '')}"
    if answer.get("provenance") == "amended" or answer.get("source") == "user_edit":
        # A change ("Change answer", a panel edit) was said later: it shows where it was
        # said, after the answer it changes (which stays: the agent read both).
        return AnswerSummary()
    if answer.get("source") == "user_skipped":
        return AnswerSummary(key, format_html('<p class="answer-skipped">{}</p>', _("Skipped")))
    return AnswerSummary(key)


def model_text(message: Message) -> str | None:
    """A structured answer (spec 004) as the model reads it: the readable line the chat
    shows, then the machine-readable envelope (`field`, `value`, `source`, …)."""
    answer = metadata_of(message).get("structured_answer")
    if answer is None or message.role != Role.USER:
        return None
    readable = message.display_content or str(answer.get("display_text") or "")
    envelope = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    return f"{readable}\n<structured_answer>{envelope}</structured_answer>"
