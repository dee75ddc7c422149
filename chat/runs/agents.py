"""The built-in agents, each one `Agent` (chat.core.agents) listed in `settings.CHAT_AGENTS`.

They live with the runs because their turn functions do: the model-calling turns
(chat.runs.turn), the offline intake (chat.agent.intake) and the echo below. A new agent
is one more value like these, anywhere importable, and one more line in the setting
(docs/agents.md).
"""

from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from chat.agent.intake import intake_turn
from chat.core.agents import Agent
from chat.core.models import Role, Run, StopReason
from chat.core.services import message_create
from chat.runs.turn import openai_turn, scripted_turn


def echo_turn(run: Run) -> str:
    """The placeholder agent: repeats the user's message."""
    text = run.trigger_message.content if run.trigger_message else ""
    message_create(
        conversation=run.conversation, role=Role.ASSISTANT, content=f"Echo: {text}", run=run
    )
    return StopReason.COMPLETED


def llm_configured() -> bool:
    """Whether the OpenAI-compatible agent can work (the condition `openai_turn` checks)."""
    return bool(settings.LLM_BASE_URL or settings.LLM_API_KEY)


INTAKE = Agent(
    name="intake",
    label=_("Intake"),
    turn=intake_turn,
    instant=True,
    opens=True,
    collects_state=True,
    about=_(
        "Asks you a few questions, one or two at a time, with buttons, lists and sliders; "
        "keeps what you said in a side panel; ends with a summary to confirm."
    ),
    hello=_("Hello! I’ll ask you a few questions."),
    composer_template="chat/agents/intake_topic.html",
    starts_template="chat/agents/intake_starts.html",
)

SCRIPTED = Agent(
    name="scripted",
    label=_("Protocol tour"),
    turn=scripted_turn,
    calls_model=True,  # an offline script, but its calls are estimated and count
    opens=True,
    about=_("A guided tour of every kind of question card. Each answer moves it one step."),
    hello=_("Hello! I’m the protocol tour."),
    hint=_("Send any message to start."),
    starts_template="chat/agents/tour_starts.html",
)

OPENAI = Agent(
    name="openai",
    label=_("Assistant"),
    turn=openai_turn,
    calls_model=True,
    available=llm_configured,
    unavailable=_("No model is connected to this server."),
    unavailable_code="llm_not_configured",
    setup=_(
        "Whoever runs this server can set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL and restart it."
    ),
    about=_(
        "A language model behind an OpenAI-compatible endpoint. Ask anything; it can ask "
        "you questions as cards."
    ),
    hello=_("Hello! How can I help?"),
)

ECHO = Agent(
    name="echo",
    label=_("Echo"),
    turn=echo_turn,
    instant=True,
    developer=True,
    about=_("Repeats what you write. Handy for trying the chat."),
    hello=_("Hello! I repeat what you write."),
)

EXTERNAL = Agent(
    name="external",
    label=_("Your program"),
    developer=True,
    about=_(
        "For developers: no built-in assistant answers. Your own program reads this "
        "conversation and replies through the JSON API or MCP."
    ),
    hello=_("This conversation is answered by your own program."),
    notice_template="chat/agents/external_notice.html",
)
