"""The question budget (issue 27): how much an agent may ask.

An agent's author sets at most ``per_turn`` questions in one reply, at most
``per_conversation`` in the whole conversation, and optionally ``one_card`` (at most one
card open at a time).  Self-check counts the questions of the reply it inspects — its
questionnaire blocks and the asking tool calls of the same step — and, over budget,
fails with a precise repair request ("ask at most 3 questions; keep the most
important").  Pure: the caller says how many were asked before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .error_messages import make_error
from .segments import ProtocolError

# Tools that show the person a card, and how to count the questions of one call.
ASKING_TOOLS = ("questionnaire_async", "interactive_form_question", "ask_user_options")


@dataclass(frozen=True, slots=True)
class QuestionBudget:
    """Limits on asking; ``None`` means no limit.  ``asked`` is how many questions the
    conversation asked before the reply being checked."""

    per_turn: int | None = None
    per_conversation: int | None = None
    one_card: bool = False
    asked: int = 0

    @property
    def limited(self) -> bool:
        return self.per_turn is not None or self.per_conversation is not None or self.one_card


def call_questions(name: str, arguments: str | Mapping[str, object]) -> int:
    """Questions one tool call asks: a questionnaire or form counts its questions (at least
    one, however broken: a repaired call still asks), an ask counts one, other tools none."""
    if name not in ASKING_TOOLS:
        return 0
    if name == "ask_user_options":
        return 1
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return 1
    questions = arguments.get("questions") if isinstance(arguments, Mapping) else None
    return max(len(questions), 1) if isinstance(questions, list) else 1


def budget_errors(cards: Sequence[int], budget: QuestionBudget, lang: str) -> list[ProtocolError]:
    """What the reply's ``cards`` (questions per card) break of ``budget``, most precise
    first: the per-conversation limit, the per-turn limit, one card at a time."""
    errors: list[ProtocolError] = []
    count = sum(cards)
    if budget.per_conversation is not None and count:
        remaining = max(budget.per_conversation - budget.asked, 0)
        if count > remaining:
            errors.append(
                make_error(
                    "selfcheck.budget_conversation",
                    "",
                    lang,
                    count=count,
                    remaining=remaining,
                    limit=budget.per_conversation,
                    asked=budget.asked,
                )
            )
    if budget.per_turn is not None and count > budget.per_turn:
        errors.append(
            make_error("selfcheck.budget_turn", "", lang, count=count, limit=budget.per_turn)
        )
    if budget.one_card and len([c for c in cards if c]) > 1:
        errors.append(make_error("selfcheck.budget_one_card", "", lang, count=len(cards)))
    return errors


def budget_prompt(budget: QuestionBudget, lang: str) -> str:
    """The system note that tells the model its budget before it asks ("" when unlimited)."""
    if not budget.limited:
        return ""
    zh = lang.lower().startswith("zh")
    parts: list[str] = []
    if budget.per_turn is not None:
        parts.append(
            f"每条回复最多问 {budget.per_turn} 个问题"
            if zh
            else f"ask at most {budget.per_turn} questions per reply"
        )
    if budget.per_conversation is not None:
        left = max(budget.per_conversation - budget.asked, 0)
        parts.append(
            f"本会话还能再问 {left} 个问题（总共最多 {budget.per_conversation} 个）"
            if zh
            else f"{left} more questions in this conversation (at most "
            f"{budget.per_conversation} in all)"
        )
    if budget.one_card:
        parts.append("同一时间只展示一张卡片" if zh else "show at most one card at a time")
    if zh:
        return "提问预算：" + "；".join(parts) + "。只问最重要的问题；自检会拒绝超出预算的回复。"
    return (
        "Question budget: "
        + "; ".join(parts)
        + ". Ask only what matters most; self-check refuses a reply over budget."
    )
