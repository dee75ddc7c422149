"""Card view models: everything a card template needs, computed up front.

Pure functions over protocol values and plain state passed in by the caller (the page
presenter or the submit view).  No database access here (checked by
``tests/test_architecture.py``): latest-only and "answered" are decided by selectors
before rendering starts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal
from urllib.parse import urlencode

from django.utils.translation import gettext as _

from questionnaires.chrome import CardChrome, CardState
from questionnaires.protocol import (
    OTHER_VALUE,
    AnswerInvalid,
    ProtocolError,
    Question,
    Questionnaire,
    QuestionnaireSegment,
    ToolResultInvalid,
    build_response,
    parse_message,
    questionnaire_from_tool_result,
)

ASYNC_TOOL = "questionnaire_async"
DRAFT_PREFIX = "q"  # draft keys of inline cards: q:<questionnaire id>

CardMode = Literal["interactive", "answered", "closed", "refused", "preview"]


# --- inputs ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MessageInput:
    """The parts of a stored message the renderer reads (no model instance needed)."""

    id: int | str
    role: str
    content: str
    display_content: str = ""
    tool_calls: Sequence[Mapping[str, object]] = ()
    # tool call id -> the content of the `tool` message answering it
    tool_results: Mapping[str, str] = field(default_factory=dict)
    readonly: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    """A stored submission: the raw form answers, for showing what was chosen.  The latest
    version of a card's answer carries the ``earlier`` ones (oldest first)."""

    key: int | str
    answers: Mapping[str, object]
    other_text: Mapping[str, str]
    skipped: Sequence[str] = ()
    declined: bool = False
    version: int = 1
    payload: Mapping[str, object] = field(default_factory=dict)
    user_message_id: int | None = None
    earlier: Sequence[Answer] = ()


@dataclass(frozen=True, slots=True)
class Draft:
    """What the user posted when a submit is refused: shown again, nothing lost."""

    questionnaire_id: str
    answers: Mapping[str, object]
    other_text: Mapping[str, str]
    code: str = ""
    message: str = ""
    errors: Sequence[ProtocolError] = ()
    still_interactive: bool = False
    skipped: Sequence[str] = ()
    # A change of an answered card ("Change answer"): the version being changed.
    version: int | None = None
    # Question ids the person interacted with (never "kept the default", DESIGN §4.14).
    touched: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class MessageState:
    """Per-message state: may its cards be answered, and which were answered."""

    interactive: bool = False
    answered: Mapping[str, Answer] = field(default_factory=dict)
    submit_url: str = ""
    preview: bool = False
    # Saved card drafts (questionnaires.drafts): questionnaire id -> the card's posted fields.
    drafts: Mapping[str, Mapping[str, Sequence[str]]] = field(default_factory=dict)
    # Where answered cards of this message post a change (the person's own page, a message
    # that is not read-only; "" in previews and admin): "Change answer" shows then.
    answer_url: str = ""
    change_url: str = ""  # GET ?questionnaire_id=…: the card reopened with its latest answer
    page_url: str = ""  # the message on its page (a reopened card's Cancel)


# --- view models -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OptionView:
    value: str
    label: str
    dom_id: str
    checked: bool


@dataclass(frozen=True, slots=True)
class QuestionView:
    index: int
    id: str
    type: str
    text: str
    dom_id: str
    field_name: str
    other_field: str
    options: tuple[OptionView, ...]
    allow_other: bool
    other_checked: bool
    other_text: str
    text_value: str
    errors: tuple[str, ...]
    skipped: bool = False
    touched: bool = False

    @property
    def skip_field(self) -> str:
        return f"skip-{self.index}"

    @property
    def touched_field(self) -> str:
        """``touched-N``: "1" once the person interacted with question N (static/js/cards.js
        sets it; a card's one button carries it), so the server never calls a click on the
        preselected option "kept the default"."""
        return f"touched-{self.index}"

    @property
    def is_choice(self) -> bool:
        return self.type in ("single_choice", "multi_choice")

    @property
    def input_type(self) -> str:
        return "radio" if self.type == "single_choice" else "checkbox"

    @property
    def other_value(self) -> str:
        return OTHER_VALUE


@dataclass(frozen=True, slots=True)
class CardView:
    dom_id: str
    form_id: str
    questionnaire_id: str
    message_id: int | str
    title: str
    mode: CardMode
    questions: tuple[QuestionView, ...]
    submit_url: str = ""
    error_code: str = ""
    error_message: str = ""
    general_errors: tuple[str, ...] = ()
    # Issue 27: the answer's version (0 while unanswered), a declined card, "Change answer"
    # (where to reopen it), a reopened card (posts a change of `version`), earlier versions.
    version: int = 0
    declined: bool = False
    change_url: str = ""
    editing: bool = False
    earlier: tuple[EarlierView, ...] = ()
    cancel_url: str = ""
    # A declined card reopened by "Change answer": it can now be answered (the server takes
    # declined -> answered), not declined again (refused), so no decline is offered.
    reopened_declined: bool = False

    @property
    def offers_decline(self) -> bool:
        return not self.reopened_declined

    @property
    def interactive(self) -> bool:
        return self.mode == "interactive"

    @property
    def changeable(self) -> bool:
        return self.mode == "answered" and bool(self.change_url)

    @property
    def version_state(self) -> str:
        """The part of the message's live state this card adds: its answer version while it
        can still change (another tab's change must reach this one)."""
        return f"v{self.version}" if self.changeable else ""

    @property
    def draft_key(self) -> str:
        return f"{DRAFT_PREFIX}:{self.questionnaire_id}"

    @property
    def one_button(self) -> OptionView | None:
        """A card asking one single-choice question with one option (a pause: "Continue")
        is that option's button, which sends it; else None."""
        if len(self.questions) != 1:
            return None
        q = self.questions[0]
        if q.type != "single_choice" or len(q.options) != 1 or q.allow_other:
            return None
        return q.options[0]

    @property
    def chrome(self) -> CardChrome:
        state: CardState = _STATES[self.mode]
        chips = {"answered": _("Answered"), "closed": _("Not answered"), "preview": _("Preview")}
        chip = chips.get(self.mode, "")
        if self.mode == "answered" and self.declined:
            chip = _("Declined")
        elif self.mode == "answered" and self.version > 1:
            chip = _("Changed")
        elif self.editing:
            chip = _("Changing your answer")
        return CardChrome(
            dom_id=self.dom_id,
            title=self.title or _("Questionnaire"),
            state=state,
            chip=chip,
            skipped=self.mode == "answered" and self.declined,
        )


_STATES: dict[CardMode, CardState] = {
    "interactive": "open",
    "answered": "answered",
    "closed": "closed",
    "refused": "refused",
    "preview": "preview",
}


@dataclass(frozen=True, slots=True)
class EarlierView:
    """An earlier version of a card's answer, one click away on the card."""

    version: int
    declined: bool
    rows: tuple[tuple[str, str], ...]
    message_id: int | None


@dataclass(frozen=True, slots=True)
class ErrorCardView:
    """A ``questionnaire_async`` call whose result failed (or hasn't arrived yet)."""

    dom_id: str
    questionnaire_id: str
    errors: tuple[ProtocolError, ...]
    pending: bool = False


# --- helpers -----------------------------------------------------------------------------


def dom_id(prefix: str, *parts: object) -> str:
    """A short DOM id that is safe whatever the questionnaire id contains."""
    digest = hashlib.sha1("\x1f".join(map(str, parts)).encode(), usedforsecurity=False)
    return f"{prefix}-{digest.hexdigest()[:12]}"


def async_calls(tool_calls: Iterable[Mapping[str, object]]) -> list[str]:
    """Ids of the ``questionnaire_async`` calls, in order.  Accepts the OpenAI shape
    ``{"id", "function": {"name", "arguments"}}`` and the flat ``{"id", "name"}``."""
    ids = []
    for call in tool_calls or ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        name = function.get("name") if isinstance(function, Mapping) else call.get("name")
        call_id = call.get("id")
        if name == ASYNC_TOOL and isinstance(call_id, str) and call_id:
            ids.append(call_id)
    return ids


def tool_result_questionnaire(
    raw: str | None, *, call_id: str
) -> Questionnaire | tuple[ProtocolError, ...] | None:
    """The card of a ``questionnaire_async`` result: a questionnaire, its errors, or None
    while the result hasn't arrived.  Never built from the raw call arguments."""
    if raw is None:
        return None
    try:
        result = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return (_result_error(_("The tool result is not valid JSON.")),)
    if isinstance(result, Mapping) and result.get("success") is not True:
        return _result_errors(result)
    try:
        return questionnaire_from_tool_result(result, tool_call_id=call_id)
    except ToolResultInvalid as exc:
        return exc.errors or (_result_error(_("The tool result is not a questionnaire.")),)


def _result_error(message: str) -> ProtocolError:
    return ProtocolError(code="questionnaire.start.result_invalid", path="", message=message)


def _result_errors(result: Mapping[str, object]) -> tuple[ProtocolError, ...]:
    errors = []
    for item in _listed(result.get("errors")):
        if isinstance(item, Mapping):
            errors.append(
                ProtocolError(
                    code=str(item.get("code", "")),
                    path=str(item.get("path", "")),
                    message=str(item.get("message", "")),
                )
            )
    return tuple(errors) or (_result_error(_("The questionnaire tool reported an error.")),)


def message_questionnaires(message: MessageInput, *, lang: str = "en") -> dict[str, Questionnaire]:
    """Every answerable questionnaire of an assistant message, by questionnaire id."""
    found: dict[str, Questionnaire] = {}
    if message.role != "assistant":
        return found
    for segment in parse_message(message.content, message_id=message.id, lang=lang):
        if isinstance(segment, QuestionnaireSegment):
            found[segment.questionnaire_id] = segment.questionnaire
    for call_id in async_calls(message.tool_calls):
        result = tool_result_questionnaire(message.tool_results.get(call_id), call_id=call_id)
        if isinstance(result, Questionnaire):
            found[call_id] = result
    return found


# --- building cards ----------------------------------------------------------------------


def card_view(
    questionnaire: Questionnaire,
    *,
    message_id: int | str,
    state: MessageState,
    draft: Draft | None = None,
) -> CardView:
    """The view model of one questionnaire card in its current state."""
    qid = questionnaire.questionnaire_id
    answered = state.answered.get(qid)
    editing = draft is not None and draft.version is not None
    mode = _mode(state, draft, answered)
    values, other, skipped, touched = _shown_values(questionnaire, state, draft, answered, mode)
    if editing and answered is not None and answered.declined and not values:
        values = _defaults(questionnaire.questions)  # a declined card reopens at its defaults
    base = dom_id("qc", message_id, qid)
    per_question, general = _error_map(draft.errors if draft else (), questionnaire)
    questions = tuple(
        replace(
            _question_view(q, n, base, values, other, per_question.get(q.id, ())),
            skipped=q.id in skipped,
            touched=q.id in touched,
        )
        for n, q in enumerate(questionnaire.questions, start=1)
    )
    return CardView(
        dom_id=base,
        form_id=f"{base}-form",
        questionnaire_id=qid,
        message_id=message_id,
        title=questionnaire.title,
        mode=mode,
        questions=questions,
        submit_url=state.answer_url if editing else state.submit_url,
        error_code=draft.code if draft else "",
        error_message=draft.message if draft else "",
        general_errors=general,
        version=answered.version if answered is not None else 0,
        declined=answered is not None and answered.declined and not editing,
        change_url=_change_url(state, qid) if answered is not None else "",
        editing=editing,
        earlier=tuple(_earlier(a) for a in answered.earlier) if answered is not None else (),
        cancel_url=state.page_url if editing else "",
        reopened_declined=editing and answered is not None and answered.declined,
    )


def _mode(state: MessageState, draft: Draft | None, answered: Answer | None) -> CardMode:
    if state.preview:
        return "preview"
    if draft is not None:
        return "interactive" if draft.still_interactive else "refused"
    if answered is not None:
        return "answered"
    return "interactive" if state.interactive else "closed"


def _shown_values(
    questionnaire: Questionnaire,
    state: MessageState,
    draft: Draft | None,
    answered: Answer | None,
    mode: CardMode,
) -> tuple[Mapping[str, object], Mapping[str, str], Sequence[str], Sequence[str]]:
    """What the card shows chosen (values, other texts, skipped, touched): the refused or
    reopened draft, else the answer, else the saved draft, else the defaults of an open card."""
    if draft is not None:
        return draft.answers, draft.other_text, draft.skipped, draft.touched
    if answered is not None:
        return answered.answers, answered.other_text, answered.skipped, ()
    saved = state.drafts.get(questionnaire.questionnaire_id) if mode == "interactive" else None
    if saved is not None:  # what the person typed before a reload or in another tab
        values, other = answers_from_form(questionnaire, saved)
        skipped = skipped_from_form(questionnaire, saved)
        return values, other, skipped, touched_from_form(questionnaire, saved)
    if mode in ("interactive", "preview"):
        return _defaults(questionnaire.questions), {}, (), ()
    return {}, {}, (), ()


def _change_url(state: MessageState, questionnaire_id: str) -> str:
    if not state.change_url:
        return ""
    return f"{state.change_url}?{urlencode({'questionnaire_id': questionnaire_id})}"


def _earlier(answer: Answer) -> EarlierView:
    return EarlierView(
        version=answer.version,
        declined=answer.declined,
        rows=tuple(readable_answers(answer.payload)),
        message_id=answer.user_message_id,
    )


def skipped_from_form(questionnaire: Questionnaire, data: Mapping[str, Sequence[str]]) -> list[str]:
    """Question ids whose ``skip-N`` box is ticked (N = 1-based question position)."""
    by_index = {str(n): q.id for n, q in enumerate(questionnaire.questions, start=1)}
    return [
        by_index[name.partition("-")[2]]
        for name, values in data.items()
        if name.startswith("skip-") and name.partition("-")[2] in by_index and any(values)
    ]


def touched_from_form(questionnaire: Questionnaire, data: Mapping[str, Sequence[str]]) -> list[str]:
    """Question ids whose ``touched-N`` field is "1": the person interacted with them (with
    JavaScript, any click or keystroke in the question; a card's one button always).  A page
    without JavaScript can't report clicks: there an answer left equal to its preselected
    default counts as kept (the card says so, docs/provenance.md)."""
    by_index = {str(n): q.id for n, q in enumerate(questionnaire.questions, start=1)}
    return [
        by_index[name.partition("-")[2]]
        for name, values in data.items()
        if name.startswith("touched-") and name.partition("-")[2] in by_index and "1" in values
    ]


def _defaults(questions: Sequence[Question]) -> dict[str, object]:
    return {q.id: list(q.default) if isinstance(q.default, tuple) else q.default for q in questions}


def _error_map(
    errors: Sequence[ProtocolError], questionnaire: Questionnaire
) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    known = {q.id for q in questionnaire.questions}
    per_question: dict[str, tuple[str, ...]] = {}
    general: list[str] = []
    for error in errors:
        if error.path in known:
            per_question[error.path] = (*per_question.get(error.path, ()), error.message)
        else:
            general.append(error.message)
    return per_question, tuple(general)


def _chosen(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, Sequence):
        return [v for v in value if isinstance(v, str)]
    return []


def _question_view(
    question: Question,
    index: int,
    base: str,
    values: Mapping[str, object],
    other: Mapping[str, str],
    errors: tuple[str, ...],
) -> QuestionView:
    qbase = f"{base}-q{index}"
    chosen = _chosen(values.get(question.id))
    options = tuple(
        OptionView(o.value, o.label, f"{qbase}-o{n}", o.value in chosen)
        for n, o in enumerate(question.options, start=1)
    )
    raw_text = values.get(question.id)
    other_value = other.get(question.id, "")
    return QuestionView(
        index=index,
        id=question.id,
        type=question.type,
        text=question.text,
        dom_id=qbase,
        field_name=f"answer-{index}",
        other_field=f"other-{index}",
        options=options,
        allow_other=question.allow_other,
        other_checked=question.allow_other and OTHER_VALUE in chosen,
        other_text=other_value if isinstance(other_value, str) else "",
        text_value=raw_text if question.type == "free_text" and isinstance(raw_text, str) else "",
        errors=errors,
    )


def answers_from_form(
    questionnaire: Questionnaire, data: Mapping[str, Sequence[str]]
) -> tuple[dict[str, str | list[str]], dict[str, str]]:
    """Form fields (``answer-N`` / ``other-N``, N = 1-based question position) →
    ``(answers, other_text)`` keyed by question id.  Fields naming no question are kept
    under their own name, so ``build_response`` refuses them as unknown questions."""
    answers: dict[str, str | list[str]] = {}
    other_text: dict[str, str] = {}
    by_index = {str(n): q for n, q in enumerate(questionnaire.questions, start=1)}
    for name, values in data.items():
        prefix, _sep, index = name.partition("-")
        if prefix not in ("answer", "other") or not index:
            continue
        question = by_index.get(index)
        if question is None:
            answers[name] = list(values)
        elif prefix == "other":
            other_text[question.id] = values[-1] if values else ""
        elif question.type == "multi_choice":
            answers[question.id] = list(values)
        else:
            answers[question.id] = values[-1] if values else ""
    for question in questionnaire.questions:
        if question.type == "multi_choice":
            answers.setdefault(question.id, [])  # no box ticked: the field is absent
    return answers, other_text


def other_typed_counts(
    questionnaire: Questionnaire,
    answers: Mapping[str, str | list[str]],
    other_text: Mapping[str, str],
) -> dict[str, str | list[str]]:
    """Posted answers where text typed into an "Other" box counts as choosing "Other"
    (issue 32: nothing typed is lost).  Without JavaScript nothing ticks "Other" as the
    person types, so a form may arrive with the text and another option (or the default)
    ticked: the single choice becomes "Other", a multi choice gains it.  With JavaScript
    static/js/cards.js leaves the box out of the post when the person picked another
    option after typing, so an explicit pick still wins there."""
    counted = dict(answers)
    for question in questionnaire.questions:
        typed = other_text.get(question.id, "")
        if not question.allow_other or not isinstance(typed, str) or not typed.strip():
            continue
        posted = counted.get(question.id)
        if question.type == "multi_choice":
            values = list(posted) if isinstance(posted, list) else []
            counted[question.id] = values if OTHER_VALUE in values else [*values, OTHER_VALUE]
        elif question.type == "single_choice":
            counted[question.id] = OTHER_VALUE
    return counted


def unsent_choice(
    questionnaire: Questionnaire, draft: Draft, counted: Mapping[str, object], *, lang: str
) -> str:
    """What a refused submit chose that the answer that counts (``counted``, its payload)
    doesn't say, as ``question: answer`` parts ("" when it says the same, or when the
    submit was a decline or can't be read): a tab that lost a race with another tab tells
    the person what was not sent (issue 32), nothing is dropped silently."""
    try:
        mine = build_response(
            questionnaire,
            {k: v for k, v in draft.answers.items() if isinstance(v, (str, list))},
            other_text=draft.other_text,
            skipped=draft.skipped,
            lang=lang,
        ).payload
    except AnswerInvalid:
        return ""
    theirs = {
        str(item.get("question_id")): item
        for item in _listed(counted.get("answers"))
        if isinstance(item, Mapping)
    }
    parts = []
    for item in _listed(mine.get("answers")):
        if not isinstance(item, Mapping):
            continue
        other = theirs.get(str(item.get("question_id")))
        if (
            other is not None
            and _text(other) == _text(item)
            and ((other.get("provenance") == "skipped") == (item.get("provenance") == "skipped"))
        ):
            continue
        shown = _("Skipped") if item.get("provenance") == "skipped" else _text(item)
        parts.append(
            _("%(answer)s (for “%(question)s”)")
            % {"answer": shown or _("(no answer)"), "question": item.get("question", "")}
        )
    return _("; ").join(parts)


def _listed(value: object) -> list[object]:
    """A JSON list as it is; anything else (a hostile or broken result) as no items."""
    return list(value) if isinstance(value, list) else []


def readable_answers(payload: Mapping[str, object]) -> list[tuple[str, str]]:
    """``(question, answer)`` pairs of a response payload, for the read-only answer card."""
    rows = []
    for item in _listed(payload.get("answers")):
        if not isinstance(item, Mapping):
            continue
        question = str(item.get("question") or item.get("question_id") or "")
        rows.append((question, _marked(item)))
    return rows


def _marked(item: Mapping[str, object]) -> str:
    """An answer as people read it, with its provenance where it matters (issue 27)."""
    provenance = item.get("provenance")
    if provenance == "skipped":
        return _("Skipped")
    shown = _text(item)
    if provenance == "default" and shown:
        return _("%(answer)s (kept the default)") % {"answer": shown}
    if provenance == "amended":
        return _("%(answer)s (changed)") % {"answer": shown or _("(no answer)")}
    return shown


def _text(item: Mapping[str, object]) -> str:
    other = item.get("other_text")
    other = other if isinstance(other, str) and other else ""
    labels = item.get("labels")
    if isinstance(labels, list):
        values = item.get("values")
        values = values if isinstance(values, list) else []
        parts = [
            str(label)
            for index, label in enumerate(labels)
            if index >= len(values) or values[index] != OTHER_VALUE
        ]
        return ", ".join(parts + ([other] if other else []))
    if other:
        return other
    # A single choice shows its label: ``answer`` is the option's value (since issue 25;
    # envelopes stored before it carry the label in both).
    answer = item.get("label", item.get("answer", ""))
    if isinstance(answer, list):
        return ", ".join(str(a) for a in answer)
    return "" if answer is None else str(answer)
