"""Every key of `Message.metadata` and `Conversation.state`, typed, in one place.

Both are JSON columns several owners write. Nothing else may invent a key: a writer passes
one of these TypedDicts (mypy checks the literal), a reader goes through `metadata_of` /
`state_of` (or the narrower accessors below) instead of indexing raw JSON. Who owns each key
is named beside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict, cast

# A normalized ask is shaped where it is validated (the pure protocol); listed here with
# every other key.
from questionnaires.protocol.ask_payload import AskOption as AskOption
from questionnaires.protocol.ask_payload import AskPayload as AskPayload
from questionnaires.protocol.jsontypes import Json, JsonValue

if TYPE_CHECKING:
    from chat.core.models import Conversation, Message


# --- Message.metadata ------------------------------------------------------------------


class StructuredAnswerEnvelope(TypedDict):
    """What the model reads of an answer to an ask (spec 004 `structured_answer`)."""

    type: Literal["structured_answer"]
    field: str
    value: Json
    display_text: str
    source: str
    turn_id: str
    raw_text: NotRequired[str]
    confidence: NotRequired[float]
    # issue 27 (additive): how the answer came to be (chosen | free_text | skipped |
    # amended), and for a change the id of the user message whose answer it replaces
    provenance: NotRequired[str]
    amends: NotRequired[int]


class AskStart(TypedDict):
    """Where a scale ask's slider starts, and the words it was read from."""

    value: float
    said: str


class FormAnswerMark(TypedDict):
    """The user message that answered (or cancelled) a deferred form."""

    type: Literal["interactive_form_question"]
    ask_id: str
    tool_use_id: str
    status: str


class ElicitationMark(TypedDict):
    server: str
    mode: str


class MessageMetadata(TypedDict, total=False):
    # Who wrote the message, when it is not a plain reply (the runs layer: "reply", "pause",
    # "loop", "self_check_failed", "self_check_diagnostic", "run_error"; the MCP endpoint:
    # "mcp"; a kind's own messages: its registry name, e.g. "elicitation").
    kind: str
    # the runs layer: a step's message stored before its tools ran ("open" until the step
    # is stored whole; the model's context leaves it out meanwhile)
    step: str
    attempt: int  # self-check: which repair attempt
    issues: list[Mapping[str, JsonValue]]  # self-check: what was wrong
    name: str  # a tool result: the tool's name
    # asks (spec 004)
    ask_user_options: AskPayload
    turn_id: str
    knowledge_reference: dict[str, str]
    structured_answer: StructuredAnswerEnvelope
    # a scale ask's starting point read from the person's earlier words (never an answer:
    # the slider starts there and the person sends it, or moves it)
    ask_start: AskStart
    # forms (spec 003): the render payload per tool call id, on the tool-calling message;
    # the answer's tool result names its form; the user's answer message is marked
    render_payloads: dict[str, dict[str, Json]]
    interactive_form: str
    interactive_form_answer: FormAnswerMark
    # elicitations: the card message names its server and mode
    elicitation: ElicitationMark
    # the runs layer: a stopped or failed turn's message that a Retry replaced (hidden, and
    # left out of the model's context)
    superseded: bool


def metadata_of(message: Message) -> MessageMetadata:
    """The message's metadata, typed (written only through `MessageMetadata`)."""
    return cast(MessageMetadata, message.metadata or {})


# --- Conversation.state ----------------------------------------------------------------


class IntakeState(TypedDict, total=False):
    """The intake agent's bookkeeping (chat.agent.intake)."""

    definition: str
    status: Literal["collecting", "confirming", "confirmed", "declined"]
    summary_questionnaire_id: str
    change_questionnaire_id: str  # "Which answers should change?", after the summary


class ScriptOrigin(TypedDict):
    """Where the scripted agent's current script began: its first run's trigger `seq`
    (or the next seq, for a run without one) and whether that run opened by itself."""

    script: str
    seq: int
    opened: bool


class ConversationState(TypedDict, total=False):
    # asks: the consultation state (questionnaires.asks.state has the layout and the patches)
    consultation_state: dict[str, Json]
    missing_slots: list[str]
    confidence: dict[str, float]
    raw_text: dict[str, str]
    display: dict[str, str]
    skipped_slots: list[str]
    history: dict[str, list[Json]]
    # the intake agent
    intake: IntakeState
    # the scripted agent: which script the tour plays (chosen on the home page, or set in
    # admin), and where in the conversation that script began (chat.runs.turn)
    script: str
    script_origin: ScriptOrigin


def state_of(conversation: Conversation) -> ConversationState:
    """The conversation's state, typed (written only through `ConversationState` keys)."""
    return cast(ConversationState, conversation.state or {})


def intake_state(conversation: Conversation) -> IntakeState:
    return state_of(conversation).get("intake") or {}
