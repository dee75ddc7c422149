"""View models for ask widgets and the consultation-state panel (no queries in templates)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chat.core.models import Conversation, Message
from questionnaires.asks import selectors
from questionnaires.asks.definitions import conversation_definition
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.state import state_view
from questionnaires.drafts import Drafts
from questionnaires.protocol.ask_payload import ask_widget, form_value
from questionnaires.protocol.ask_reference import reference_or_none


@dataclass(frozen=True)
class AskView:
    """Context of `chat/asks/<widget>.html`."""

    conversation_id: int
    message_id: int
    turn_id: str
    ask: dict[str, Any]
    widget: str
    answerable: bool
    answer: StructuredAnswer | None = None
    error: str = ""
    typed: str = ""
    options: list[dict[str, Any]] = field(default_factory=list)
    reference: dict[str, str] | None = None  # the "Why we ask" knowledge reference

    @property
    def template(self) -> str:
        return f"chat/asks/{self.widget}.html"

    @property
    def dom_id(self) -> str:
        return f"ask-{self.message_id}"

    @property
    def scale_start(self) -> Any:
        """Where the slider starts: the middle of the scale, on a step."""
        low, high, step = self.ask["min"], self.ask["max"], self.ask["step"]
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
    ask = message.metadata["ask_user_options"]
    options = [{**o, "form_value": form_value(o["value"])} for o in ask.get("options", [])]
    return AskView(
        conversation_id=message.conversation_id,
        message_id=message.pk,
        turn_id=message.metadata.get("turn_id", ""),
        ask=ask,
        widget=ask_widget(ask),
        answerable=answerable and answer is None,
        answer=answer,
        error=error,
        typed=typed,
        options=options,
        reference=reference_or_none(message.metadata.get("knowledge_reference")),
    )


def ask_views(
    *, conversation: Conversation, messages: Sequence[Message], drafts: Drafts | None = None
) -> dict[int, AskView]:
    """The ask widgets of `messages` (a tail of the conversation), by message id."""
    ask_messages = [m for m in messages if selectors.is_ask(m)]
    if not ask_messages:
        return {}
    # Answerability depends on what follows an ask, so read the conversation's own tail
    # (the given messages may be a subset).
    tail = list(conversation.messages.order_by("-seq")[:30])[::-1]
    open_ids = selectors.latest_turn_asks(tail)
    answers = selectors.answers_by_ask(conversation=conversation)
    drafts = drafts or {}
    return {
        m.pk: ask_view(
            m,
            answerable=m.pk in open_ids,
            answer=answers.get(m.pk),
            typed=_typed(drafts.get(f"ask:{m.pk}")) if m.pk in open_ids else "",
        )
        for m in ask_messages
    }


def _typed(fields: dict[str, list[str]] | None) -> str:
    values = (fields or {}).get("text") or [""]
    return values[-1]


def ask_view_single(
    *, conversation: Conversation, message: Message, error: str = "", typed: str = ""
) -> AskView:
    return ask_view(
        message,
        answerable=selectors.ask_is_answerable(conversation=conversation, ask_message=message),
        answer=selectors.answer_for_ask(ask_message=message),
        error=error,
        typed=typed,
    )


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
    ask: dict[str, Any] | None
    options: list[dict[str, Any]]
    current: str

    @property
    def confidence_percent(self) -> int | None:
        return None if self.confidence is None else round(self.confidence * 100)


def state_panel(*, conversation: Conversation) -> dict[str, Any]:
    """Context of the consultation-state panel: one row per known field."""

    view = state_view(conversation.state or {})
    definition = conversation_definition(conversation)
    labels = {s.field: s.label for s in definition.slots} if definition else {}
    order = list(labels)
    for name in [*view["consultation_state"], *view["missing_slots"], *view["skipped_slots"]]:
        if name not in order:
            order.append(name)
    rows = []
    for name in order:
        filled = name in view["consultation_state"]
        missing, skipped = name in view["missing_slots"], name in view["skipped_slots"]
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
                options=[
                    {**o, "form_value": form_value(o["value"])}
                    for o in (ask or {}).get("options", [])
                ],
                current=form_value(value) if filled else "",
            )
        )
    intake = (conversation.state or {}).get("intake", {})
    return {
        "conversation": conversation,
        "slots": rows,
        "definition": definition,
        "status": intake.get("status", ""),
        "filled_count": sum(1 for r in rows if r.filled),
    }


def ask_cards_for(
    *, conversation: Conversation, messages: Sequence[Message], drafts: Drafts
) -> dict[int, list[AskView]]:
    """The registry's presenter: each ask message's widget."""
    views = ask_views(conversation=conversation, messages=messages, drafts=drafts)
    return {pk: [view] for pk, view in views.items()}


def state_panel_for(*, conversation: Conversation) -> dict[str, Any] | None:
    """The panel for conversations that collect structured state, else None."""
    state = conversation.state or {}
    if conversation.agent != "intake" and not any(
        k in state for k in ("consultation_state", "missing_slots")
    ):
        return None
    return state_panel(conversation=conversation)
