"""The kind registry: every way of asking, and all the rest of the product needs to know of it.

A kind is one subpackage of `questionnaires/` whose `kind.py` holds one `Kind`, named once in
`settings.QUESTIONNAIRE_KINDS` (like `INSTALLED_APPS`). Whatever used to name every kind
iterates this registry instead:

- the page (`chat.edge.page`): message bodies, the cards attached to a message, how an answer
  shows, side panels, whether the assistant waits for the person;
- drafts (`questionnaires.drafts`): which kind a draft key names and whether that card is open;
- the rule across kinds (`input_refuse_if_waiting`): while a card that holds the conversation
  waits, every other input — typed text, another card, a slot edit — is refused alike;
- the model's context (`chat.agent.context`): which messages the model never reads, and how
  an answer reads to it;
- the base template (each kind's static files) and `chat/urls.py` (its URL patterns);
- waits (`chat.core.waits`, `chat.runs`): which waits an answer closes, the wait a turn
  opens, what the reaper and Stop do to its cards; the MCP host's elicitation backend;
  its analytics source and its admin (the block at the end; docs/kinds.md).

The registry imports no kind: kinds are loaded by their dotted path on first use, so a kind may
use the registry (the rule across kinds) without an import circle, and a kind that is not
listed is not loaded at all. Tests register more kinds by overriding the setting.
"""

from __future__ import annotations

import enum
import functools
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Protocol, runtime_checkable

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.db.models import QuerySet
from django.dispatch import receiver
from django.utils.functional import Promise
from django.utils.module_loading import import_string
from django.utils.safestring import SafeString

from chat.core.errors import ChatError
from chat.core.metadata import MessageMetadata
from chat.core.models import MCP_CALL_WAIT, Conversation, Message, Run, Wait
from chat.core.waits import wait_open as core_wait_open
from questionnaires.chrome import CardChrome as CardChrome  # the one card's view model
from questionnaires.chrome import CardState as CardState

logger = logging.getLogger(__name__)

# Saved card drafts by card key (`<draft prefix>:<id>`): the card form's fields as posted.
Drafts = Mapping[str, Mapping[str, Sequence[str]]]


@runtime_checkable
class CardView(Protocol):
    """What the page needs of any card's view model (each kind's template reads the rest)."""

    @property
    def dom_id(self) -> str: ...

    @property
    def live_state(self) -> str:
        """ "" once the card can no longer change; else a short token that changes whenever
        the card does (open tabs send it back and get the card again when it differs)."""
        ...

    @property
    def answer_key(self) -> str:
        """The key the answering message's `AnswerSummary` carries, when answers may arrive
        out of order (two questions asked at once); "" otherwise."""
        ...


class Presenter(Protocol):
    """The cards of a batch of messages, by message id, with a fixed number of queries."""

    def __call__(
        self, *, conversation: Conversation, messages: Sequence[Message], drafts: Drafts
    ) -> Mapping[int, Sequence[CardView]]: ...


@dataclass(frozen=True)
class Body:
    """A message body rendered by a kind: its HTML, its live state (as `CardView.live_state`)
    and the ids of the card forms in it that can be submitted (the page adds their CSRF
    inputs, since body HTML is cached)."""

    html: SafeString
    live_state: str = ""
    form_ids: tuple[str, ...] = ()


class BodyPresenter(Protocol):
    """Renders message bodies (one kind does: inline questionnaires live inside the text).
    `interactive` is False for read-only previews (admin); `refused` is this kind's own value
    describing a refused answer, shown on its card with what the person chose."""

    def __call__(
        self,
        *,
        conversation: Conversation,
        messages: Sequence[Message],
        drafts: Drafts,
        interactive: bool,
        refused: Refused | None,
    ) -> Sequence[Body]: ...


class RunEffect(enum.Enum):
    """What an open card of the kind does to the run that showed it."""

    ENDS_TURN = "ends_turn"  # the turn is over; the answer starts the next run
    DEFERS_RUN = "defers_run"  # the run stops (deferred); the answer resumes it as a tool result
    HOLDS_RUN = "holds_run"  # the run keeps waiting inside a tool call until the answer


@dataclass(frozen=True)
class AnswerSummary:
    """How a message that answers a card of this kind shows in the chat: `key` matches the
    card's `answer_key` (the page puts the answer right after its card); `html`, when set,
    replaces the message body."""

    key: str = ""
    html: SafeString | None = None


@dataclass(frozen=True)
class Panel:
    """A side panel of the conversation page: a template and its `panel` context, with
    its name (`title`) and a few words on where it stands (`summary`, e.g. "3 of 7
    answered"), which the page's pill shows where the panel hides behind it."""

    template: str
    view: object
    title: str = ""
    summary: str = ""


@dataclass(frozen=True)
class Refused:
    """A refused answer to show again on its card: which kind and message, and the kind's own
    value for it (its card view with the error, or what its body renderer needs)."""

    kind: str
    message_id: int
    value: object


@dataclass(frozen=True)
class Pending:
    """A question waiting for the person as a machine client sees it (an AG-UI interrupt):
    the question as shown, a JSON Schema of the answer the kind's `resolve` takes, and the
    tool call that asked it, if one did; `metadata`, what else a client needs to show it
    (an MCP server's name, the link a person is asked to open)."""

    message: str
    response_schema: Mapping[str, object]
    tool_call_id: str = ""
    metadata: Mapping[str, object] | None = None
    # A short question (one single choice, a yes/no) answered with one click: each choice's
    # label and the `resolve` payload it sends (the inbox answers in place with these).
    choices: tuple[Choice, ...] = ()


@dataclass(frozen=True)
class Choice:
    """One click that answers a short question: what the button says, what `resolve` gets."""

    label: str
    payload: Mapping[str, object]


@dataclass(frozen=True)
class Whereabouts:
    """Where a waiting question is, for people who look for it (the inbox, notifications):
    the message its card is attached to, the card's DOM id (the page's anchor), the question
    as shown, and who asks when it is not the conversation's agent (an MCP server's name)."""

    message_id: int
    anchor: str
    title: str
    asker: str = ""
    # Waiting behind an earlier question (asks of one turn come one at a time): listed, but
    # answered only once its turn comes, on its card.
    queued: bool = False


class Resolve(Protocol):
    """Answer the card behind a wait (`ref` = its `Wait.ref`) for `user`, from a JSON
    `payload` shaped by its `Pending.response_schema`; `payload=None` declines (or skips)
    it. The kind's own answer path: its checks, its 400/409s (ChatError), its next run."""

    def __call__(
        self, *, conversation: Conversation, ref: str, payload: object, user: User, lang: str
    ) -> None: ...


class Amend(Protocol):
    """Change the person's answer to the card behind the answered wait `ref` to what
    `words` name ("actually, make it X", conversation repair, issue 36) through the kind's
    change-answer path, keeping `typed` (the whole reply) as the words it came from. The
    payload read (as `resolve` takes it), or None when the words name nothing of it."""

    def __call__(
        self,
        *,
        conversation: Conversation,
        ref: str,
        words: str,
        typed: str,
        user: User,
        lang: str,
    ) -> Mapping[str, object] | None: ...


@dataclass(frozen=True, kw_only=True)
class Kind:
    """One way of asking. Only `name` and `label` are required; a kind fills in what it does."""

    name: str  # stable: draft keys, card state, analytics, metadata["kind"] of its messages
    label: str | Promise  # for people (admin, analytics)
    # Cards attached to messages (one template per card, its context is `card`) ...
    card_template: str = ""
    present: Presenter | None = None
    # ... or message bodies (the inline kind: cards inside the assistant's text).
    body: BodyPresenter | None = None
    # Drafts: keys `<draft_prefix>:<id>`; `draft_open(conversation, id)` says whether that
    # card exists in the conversation and can still be answered (else no draft is kept).
    draft_prefix: str = ""
    draft_open: Callable[[Conversation, str], bool] | None = None
    # While one of its cards waits and holds the conversation, the refusal (409) every other
    # input gets; None when nothing of it waits. `refusal_template` shows the way out (its
    # context: `conversation`, `refusal` = the error's details, `where` = composer | panel).
    waiting: Callable[[Conversation], ChatError | None] | None = None
    refusal_template: str = ""
    run_effect: RunEffect = RunEffect.ENDS_TURN
    # The model's context: whether it reads messages of this kind (metadata["kind"] == name),
    # and how a message answering it reads (None: the message's content as stored).
    model_sees: bool = True
    model_text: Callable[[Message], str | None] | None = None
    answer_summary: Callable[[Message], AnswerSummary | None] | None = None
    # The question budget (issue 27): how many questions the agent asked in a conversation
    # with this kind (None: its questions are not the agent's to budget, e.g. an MCP server's).
    questions_asked: Callable[[Conversation], int] | None = None
    panel: Callable[[Conversation], Panel | None] | None = None
    # Machine clients (AG-UI): a wait of this kind described by its ref (None: not one a
    # client can answer), and its answer from a JSON payload.
    pending: Callable[[Conversation, str], Pending | None] | None = None
    resolve: Resolve | None = None
    # Conversation repair (issue 36): an answered card changed from typed words.
    amend: Amend | None = None
    # People (the inbox, notifications): where the card behind a wait is (None: gone).
    locate: Callable[[Conversation, str], Whereabouts | None] | None = None
    # The edge: a module with `urlpatterns` (pages, namespace "chat") and optionally
    # `api_router` (a django-ninja Router, mounted on the JSON API); static files the page
    # loads (.js or .css).
    urls: str = ""
    static: tuple[str, ...] = ()
    # --- issue 35: waits, expiry, Stop, analytics, admin (see "kinds own their waits") ---
    # Its waits (`Wait.kind` == name, opened with `wait_open` below): closed by the
    # person's next message (`answered_by_message`: the answer is a new user message that
    # starts the next run), except the refs `answer_keeps_open(conversation, message)`
    # names (an ask's siblings, still to be answered one at a time).
    answered_by_message: bool = False
    answer_keeps_open: Callable[[Conversation, Message], Collection[str]] | None = None
    # The turn ended awaiting the person on a message of this kind's cards: open its wait
    # (`turn_wait(run, message)`) — unless the message called one of some kind's
    # `wait_tools` (tools that open their kind's waits themselves).
    turn_wait: Callable[[Run, Message], None] | None = None
    wait_tools: tuple[str, ...] = ()
    # The reaper: one of its waits is past its deadline (before the wait closes as
    # expired); Stop: a run is stopped (before its waits close as cancelled).
    on_expire: Callable[[Wait], None] | None = None
    on_stop: Callable[[Run], None] | None = None
    # Dotted paths, loaded by the layers above on first use (a kind's model side never
    # imports them): its analytics source (a module-level `SOURCE`,
    # questionnaires.analytics.outcomes.Source), its admin registration (a module whose
    # import registers its models; questionnaires.admin imports it), and the module that
    # answers MCP servers' elicitation requests (chat.mcphost.elicit.Backend).
    analytics: str = ""
    admin: str = ""
    mcp_elicitation: str = ""
    # One answer path (issue 35): how an answer of this kind is recorded (see "answering").
    answering: Answering | None = None


class InputRefused(ChatError):
    """Input refused because a card of `kind` waits for the person (its code, its message)."""

    def __init__(self, kind: Kind, error: ChatError) -> None:
        super().__init__(error.code, error.message, status=error.status, details=error.details)
        self.kind = kind


@functools.cache
def kinds() -> tuple[Kind, ...]:
    """Every registered kind, in `settings.QUESTIONNAIRE_KINDS` order (cards show in it)."""
    loaded: list[Kind] = []
    for path in settings.QUESTIONNAIRE_KINDS:
        kind = import_string(path)
        if not isinstance(kind, Kind):
            raise ImproperlyConfigured(f"QUESTIONNAIRE_KINDS: {path} is not a Kind")
        loaded.append(kind)
    _check_unique(loaded)
    return tuple(loaded)


def _check_unique(loaded: Sequence[Kind]) -> None:
    _check_names(loaded)
    for attribute in ("name", "draft_prefix"):
        values = [getattr(k, attribute) for k in loaded if getattr(k, attribute)]
        if len(values) != len(set(values)):
            raise ImproperlyConfigured(f"QUESTIONNAIRE_KINDS: two kinds share a {attribute}")
    if sum(1 for k in loaded if k.body is not None) > 1:
        raise ImproperlyConfigured("QUESTIONNAIRE_KINDS: only one kind may render message bodies")


@receiver(setting_changed)
def _kinds_changed(*, setting: str, **_kwargs: object) -> None:
    if setting == "QUESTIONNAIRE_KINDS":
        kinds.cache_clear()


def kind_named(name: str) -> Kind:
    for kind in kinds():
        if kind.name == name:
            return kind
    raise KeyError(name)


def body_kind() -> Kind | None:
    """The kind that renders message bodies, if one is registered."""
    return next((k for k in kinds() if k.body is not None), None)


# --- cards -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Card:
    """One card attached to a message: its kind and the view model its template gets."""

    kind: str
    view: CardView

    @property
    def template(self) -> str:
        return kind_named(self.kind).card_template


def cards_for(
    *, conversation: Conversation, messages: Sequence[Message], drafts: Drafts | None = None
) -> dict[int, tuple[Card, ...]]:
    """Every attached card of `messages`, by message id, in registry order; open cards show
    their saved `drafts`."""
    found: dict[int, list[Card]] = {}
    for kind in kinds():
        if kind.present is None:
            continue
        try:
            presented = kind.present(
                conversation=conversation, messages=messages, drafts=drafts or {}
            )
        except Exception:  # one broken kind must not take the conversation down with it
            logger.exception("conversation %s: %s cards failed", conversation.pk, kind.name)
            continue
        for message_id, views in presented.items():
            found.setdefault(message_id, []).extend(Card(kind.name, v) for v in views)
    return {message_id: tuple(cards) for message_id, cards in found.items()}


def questions_asked(*, conversation: Conversation) -> int:
    """Every question the agent asked in `conversation`, over every kind (its budget)."""
    return sum(k.questions_asked(conversation) for k in kinds() if k.questions_asked is not None)


# --- the rule across kinds ---------------------------------------------------------------


def waiting(*, conversation: Conversation) -> list[InputRefused]:
    """What waits for the person and holds the conversation, one refusal per kind."""
    found = []
    for kind in kinds():
        error = kind.waiting(conversation) if kind.waiting is not None else None
        if error is not None:
            found.append(InputRefused(kind, error))
    return found


def input_refuse_if_waiting(*, conversation: Conversation) -> None:
    """Raise `InputRefused` (409 with the waiting kind's code: `pending_interactive_form`,
    `pending_elicitation`, …) while a card holds the conversation (spec 003: other input is
    refused until the form is submitted or cancelled — typed text, card answers and slot
    edits alike)."""
    refusals = waiting(conversation=conversation)
    if refusals:
        raise refusals[0]


# --- the model's view --------------------------------------------------------------------


def hidden_from_model() -> frozenset[str]:
    """`metadata["kind"]` values of messages the model never reads."""
    return frozenset(k.name for k in kinds() if not k.model_sees)


def model_text(message: Message) -> str | None:
    """How an answer message reads to the model, when a kind says (else None)."""
    for kind in kinds():
        if kind.model_text is not None:
            text = kind.model_text(message)
            if text is not None:
                return text
    return None


def answer_summary(message: Message) -> AnswerSummary | None:
    for kind in kinds():
        if kind.answer_summary is not None:
            summary = kind.answer_summary(message)
            if summary is not None:
                return summary
    return None


def panel_for(*, conversation: Conversation) -> Panel | None:
    """The conversation's side panel (the first kind that has one for it)."""
    for kind in kinds():
        panel = kind.panel(conversation) if kind.panel is not None else None
        if panel is not None:
            return panel
    return None


def static_files() -> tuple[str, ...]:
    """Every kind's static files, in registry order, each once."""
    return tuple(dict.fromkeys(path for kind in kinds() for path in kind.static))


# --- issue 35: kinds own their waits, expiry, Stop, analytics and admin -----------------
# (One block: the switch points of chat.core.waits, chat.runs, chat.mcphost, the analytics
# and the admin ask these instead of naming kinds.)

# A kind's name is `Wait.kind` and `CardDefinition.kind` (CharFields of this length,
# checked here rather than enumerated in the database).
KIND_NAME_MAX = 12


def _check_names(loaded: Sequence[Kind]) -> None:
    for kind in loaded:
        if not kind.name or len(kind.name) > KIND_NAME_MAX or kind.name == MCP_CALL_WAIT:
            raise ImproperlyConfigured(
                f"QUESTIONNAIRE_KINDS: a kind's name is 1 to {KIND_NAME_MAX} characters and "
                f"not {MCP_CALL_WAIT!r}: {kind.name!r}"
            )


def kind_of(name: str) -> Kind | None:
    """The registered kind `name` (a `Wait.kind`, an analytics card's kind), else None."""
    return next((k for k in kinds() if k.name == name), None)


def wait_open(
    *,
    kind: str,
    conversation: Conversation,
    ref: str,
    seconds: float,
    run: Run | None = None,
    tool_call_id: str = "",
    resumes_run: bool = False,
    check_limits: bool = True,
) -> Wait:
    """Open a person-wait of the registered kind `kind` (chat.core.waits.wait_open, with
    its limits). A name that is not a registered kind is a programming error, refused
    before anything is written (a wait nobody expires, closes or counts)."""
    if kind_of(kind) is None:
        raise ImproperlyConfigured(f"wait_open: {kind!r} is not a registered kind")
    return core_wait_open(
        conversation=conversation,
        kind=kind,
        ref=ref,
        seconds=seconds,
        run=run,
        tool_call_id=tool_call_id,
        resumes_run=resumes_run,
        check_limits=check_limits,
    )


def waits_answered(
    waits: QuerySet[Wait], *, conversation: Conversation, message: Message | None
) -> QuerySet[Wait]:
    """Of a conversation's open `waits`, the ones the person's new message `message`
    answers (`settings.WAITS_ANSWERED`, called by chat.core.waits.waits_close_answered):
    those of kinds answered by a message, but the refs their kind keeps open."""
    answered = [k for k in kinds() if k.answered_by_message]
    found = waits.filter(kind__in=[k.name for k in answered])
    if message is None:
        return found
    keep: set[str] = set()
    for kind in answered:
        if kind.answer_keeps_open is not None:
            keep.update(kind.answer_keeps_open(conversation, message))
    return found.exclude(ref__in=keep) if keep else found


def turn_awaits(*, run: Run, message: Message, tool_names: Collection[str]) -> None:
    """A turn ended awaiting the person on `message`: the kinds that open a wait then do
    (inline cards), unless a tool it called opened its own kind's waits (asks)."""
    if any(name in kind.wait_tools for kind in kinds() for name in tool_names):
        return
    for kind in kinds():
        if kind.turn_wait is not None:
            kind.turn_wait(run, message)


def wait_expire(wait: Wait) -> None:
    """The reaper: the overdue `wait` ends the way its kind says (nothing, for a kind
    without `on_expire`); the caller then closes it as expired."""
    kind = kind_of(wait.kind)
    if kind is None:
        logger.warning("wait %s: kind %r is not registered", wait.ref, wait.kind)
    elif kind.on_expire is not None:
        kind.on_expire(wait)


def run_stop(run: Run) -> None:
    """Stop: every kind ends what it shows for `run` (its cards lock and say so)."""
    for kind in kinds():
        if kind.on_stop is not None:
            kind.on_stop(run)


def analytics_sources() -> tuple[tuple[Kind, object], ...]:
    """Each kind's analytics source (its `analytics` module's `SOURCE`), in registry order."""
    return tuple(
        (kind, import_string(f"{kind.analytics}.SOURCE")) for kind in kinds() if kind.analytics
    )


def admin_register() -> None:
    """Register every kind's admin (imports its `admin` module; idempotent)."""
    for kind in kinds():
        if kind.admin:
            import_module(kind.admin)


def admin_conversation_fields() -> tuple[Callable[..., str], ...]:
    """Every kind's sections of a conversation's admin page (its admin module's
    `CONVERSATION_FIELDS`: admin display functions of a conversation)."""
    fields: list[Callable[..., str]] = []
    for kind in kinds():
        if kind.admin:
            fields.extend(getattr(import_module(kind.admin), "CONVERSATION_FIELDS", ()))
    return tuple(fields)


def mcp_elicitation() -> str:
    """The dotted path of the module answering MCP elicitation requests ("" without one)."""
    return next((k.mcp_elicitation for k in kinds() if k.mcp_elicitation), "")


# --- answering (one answer path, issue 35) -----------------------------------------------
#
# Every kind's answer is recorded by `questionnaires.answering.answer_record`: it locks the
# conversation, lets the kind check and write its row in a savepoint (`Answering.record`),
# refuses while another card holds the conversation, posts the answer (`chat.core.services.
# answer_post`), links the posted message to the row, counts it and clears the card's draft.
# A kind supplies only its row and its envelope, through `Kind.answering`.


@dataclass(frozen=True)
class AnswerPost:
    """The user message an answer posts: its `content` (the envelope the model reads),
    `display` (what people see, "" = the content), `metadata` and the `card_locked` event
    every open tab gets (None: no event)."""

    content: str
    display: str = ""
    metadata: MessageMetadata | None = None
    lock_event: Mapping[str, object] | None = None


@dataclass(frozen=True)
class Recorded:
    """What a kind's `record` wrote: its `row`, the message to post (None: the answer goes
    back another way, e.g. to the run that holds the tool call), `link` storing the posted
    message on the row, the metric's `outcome` (answered, skipped, declined, cancelled; ""
    counts nothing, e.g. a change) and the id of the card whose draft is now void ("" none)."""

    row: object
    post: AnswerPost | None = None
    link: Callable[[Message], None] | None = None
    outcome: str = ""
    draft: str = ""
    # The answer is to the very card that held the conversation (a pending form, an MCP
    # elicitation): no other card's wait refuses it. Else the rule across kinds applies.
    answers_the_wait: bool = False


class AnswerRecord(Protocol):
    """Check and write one answer of the kind (`answer` is the kind's own request value)
    under the conversation's lock, inside a savepoint: raise `ChatError` to refuse (404,
    400, the 409s: read-only, already answered, stale version, not the latest)."""

    def __call__(self, conversation: Conversation, answer: object) -> Recorded: ...


class AnswerConflict(Protocol):
    """The error for a write the database refused (a unique constraint: another tab
    recorded the same answer or version first)."""

    def __call__(self, conversation: Conversation, answer: object) -> Exception: ...


@dataclass(frozen=True, kw_only=True)
class Answering:
    """A kind's part of the one answer path: its `record` and, when a unique constraint
    backs its rows, its `conflict`."""

    record: AnswerRecord
    conflict: AnswerConflict | None = None


def answering_of(name: str) -> Answering:
    """The answer path of the kind called `name` (registered, with `answering`)."""
    answering = kind_named(name).answering
    if answering is None:
        raise ImproperlyConfigured(f"kind {name!r} has no answering")
    return answering
