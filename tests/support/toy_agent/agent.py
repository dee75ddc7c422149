"""The toy agent: opens the conversation itself, then answers every message in toy words.
Its turn is instant database work (one transaction), like the echo's."""

from __future__ import annotations

from chat.core.agents import Agent
from chat.core.models import Role, Run, StopReason
from chat.core.services import message_create


def toy_turn(run: Run) -> str:
    text = run.trigger_message.content if run.trigger_message else ""
    reply = f"Toy says: {text}" if text else "Toy here: what shall we play?"
    message_create(conversation=run.conversation, role=Role.ASSISTANT, content=reply, run=run)
    return StopReason.COMPLETED


TOY = Agent(
    name="toy",
    label="Toy box",
    turn=toy_turn,
    instant=True,
    opens=True,
    calls_model=True,  # (it calls none; it counts as one: token budget, MCP servers' tools)
    about="Plays with you in toy words.",
    hello="Hello from the toy box!",
    hint="Send anything to play.",
    notice_template="toy_agent/notice.html",
    starts_template="toy_agent/starts.html",
)

# Registered, but never there: offered disabled, refused when chosen.
BROKEN_TOY = Agent(
    name="broken-toy",
    label="Broken toy",
    turn=toy_turn,
    available=lambda: False,
    unavailable="The toy has flat batteries.",
    unavailable_code="toy_batteries_flat",
    setup="Put new batteries in (TOY_BATTERIES).",
)

NOT_AN_AGENT = {"name": "toy"}
BADLY_NAMED = Agent(name="Toy Box!", label="Toy")
