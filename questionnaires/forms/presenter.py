"""View models of deferred interactive forms (spec 003), computed before rendering.

A form renders ONLY from the `render_payload` the server wrote onto the tool block
(`message.metadata["render_payloads"][tool call id]`), never from the raw tool input,
and only when that payload is valid: type `interactive_form_question`, a non-empty
`questions` list that normalizes cleanly. State (pending / answered / cancelled) comes
from the form rows, read in one query for any number of messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from django.urls import reverse
from django.utils.translation import gettext as _

from chat.core.metadata import metadata_of
from chat.core.models import Conversation, Message, Role, RunStatus
from questionnaires.forms.models import TOOL_NAME, FormQuestion, InteractiveForm
from questionnaires.forms.selectors import forms_for_tool_calls
from questionnaires.protocol import normalize_interactive_form
from questionnaires.registry import CardChrome, CardState, Drafts

DRAFT_PREFIX = "form"
DONE = (RunStatus.FINISHED, RunStatus.FAILED, RunStatus.CANCELLED)


@dataclass(frozen=True)
class FormOption:
    label: str
    value: str
    checked: bool
    dom_id: str


@dataclass(frozen=True)
class FormQuestionView:
    id: str
    question: str
    input_type: str
    multi_select: bool
    multiline: bool
    required: bool
    placeholder: str
    name: str
    dom_id: str
    options: tuple[FormOption, ...] = ()
    value: str = ""
    error: str = ""


@dataclass(frozen=True)
class FormCard:
    """One form; `status` is pending, answered or cancelled (`answerable` when pending)."""

    ask_id: str
    tool_use_id: str
    status: str
    questions: tuple[FormQuestionView, ...]
    conversation_id: int
    message_id: int
    answer_message: str = ""
    error: str = ""
    # Issue 27: the answer's version, "Change answer" once the run has finished, the card
    # reopened for a change, the earlier answers' messages.
    version: int = 1
    changeable: bool = False
    editing: bool = False
    earlier_messages: tuple[int, ...] = ()

    @property
    def answerable(self) -> bool:
        return self.status == "pending" or self.editing

    @property
    def submit_url(self) -> str:
        if self.editing:
            return reverse("chat:interactive_form_change", args=[self.conversation_id, self.ask_id])
        return reverse("chat:interactive_form_answer", args=[self.conversation_id])

    @property
    def change_url(self) -> str:
        return reverse("chat:interactive_form_change", args=[self.conversation_id, self.ask_id])

    @property
    def dom_id(self) -> str:
        return f"form-{self.ask_id}"

    @property
    def draft_key(self) -> str:
        return f"{DRAFT_PREFIX}:{self.ask_id}"

    @property
    def live_state(self) -> str:
        """ "f" while it waits: open tabs get it again, locked, once it is answered; its
        version while it can be changed (another tab's change reaches this one)."""
        if self.status == "pending":
            return "f"
        return f"v{self.version}" if self.changeable else ""

    @property
    def answer_key(self) -> str:
        return ""

    @property
    def chrome(self) -> CardChrome:
        state: CardState = (
            "open" if self.answerable else "answered" if self.status == "answered" else "closed"
        )
        chips = {"answered": _("Answered"), "cancelled": _("Cancelled")}
        chip = chips.get(self.status, "")
        if self.editing:
            chip = _("Changing your answer")
        elif self.status == "answered" and self.version > 1:
            chip = _("Changed")
        return CardChrome(
            dom_id=self.dom_id,
            title=_("A few questions from the assistant"),
            state=state,
            chip=chip,
        )


@dataclass(frozen=True)
class FormDraft:
    """A refused submit: the user's values and the per-field errors, shown in place."""

    answers: Mapping[str, object] = field(default_factory=dict)
    fields: Mapping[str, str] = field(default_factory=dict)
    error: str = ""
    message: str = ""
    editing: bool = False  # "Change answer": the answered form reopened with these answers


def valid_payload(payload: object) -> list[FormQuestion] | None:
    """The questions of a trustworthy render payload, or None (then nothing renders)."""
    if not isinstance(payload, dict) or payload.get("type") != TOOL_NAME:
        return None
    questions = payload.get("questions")
    if not isinstance(questions, list) or not questions:
        return None
    normalized = normalize_interactive_form({"questions": questions})
    return cast(list[FormQuestion], normalized.questions) if normalized.ok else None


def form_calls(message: Message) -> list[str]:
    """Ids of the message's `interactive_form_question` tool calls."""
    ids = []
    for call in message.tool_calls or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and function.get("name") == TOOL_NAME and call.get("id"):
            ids.append(str(call["id"]))
    return ids


def form_cards_for(
    *,
    conversation: Conversation,
    messages: Sequence[Message],
    draft: FormDraft | None = None,
    drafts: Drafts | None = None,
) -> dict[int, list[FormCard]]:
    """Form cards by message id (the registry's presenter). `draft` applies to the pending
    form."""
    wanted = {m.pk: form_calls(m) for m in messages if m.role == Role.ASSISTANT}
    ids = [i for calls in wanted.values() for i in calls]
    forms = forms_for_tool_calls(conversation_id=conversation.pk, tool_use_ids=ids)
    cards: dict[int, list[FormCard]] = {}
    for message in messages:
        payloads = metadata_of(message).get("render_payloads") or {}
        for call_id in wanted.get(message.pk, []):
            form = forms.get(call_id)
            questions = valid_payload(payloads.get(call_id))
            if form is None or questions is None:
                continue
            own = draft or _saved(form.ask_id, questions, drafts or {})
            card = _card(conversation, message, form, questions, own)
            cards.setdefault(message.pk, []).append(card)
    return cards


def _saved(ask_id: str, questions: list[FormQuestion], drafts: Drafts) -> FormDraft | None:
    """The pending form's saved draft (questionnaires.drafts) as the values it shows."""
    fields = drafts.get(f"{DRAFT_PREFIX}:{ask_id}")
    if fields is None:
        return None
    answers: dict[str, object] = {}
    for q in questions:
        values = fields.get(f"answer-{q['id']}", [])
        answers[q["id"]] = list(values) if q["multi_select"] else (values[-1] if values else "")
    return FormDraft(answers=answers)


def _card(
    conversation: Conversation,
    message: Message,
    form: InteractiveForm,
    questions: list[FormQuestion],
    draft: FormDraft | None,
) -> FormCard:
    pending = form.status == "pending"
    changeable = form.status == "answered" and (form.run is None or form.run.status in DONE)
    editing = bool(draft and draft.editing and changeable)
    if pending or editing:
        values = draft.answers if draft else {q["id"]: q["default"] for q in questions}
    else:
        values = (form.answer or {}).get("answers", {})
    errors = draft.fields if draft and (pending or editing) else {}
    views = tuple(
        _question(form.ask_id, n, q, values.get(q["id"]), errors.get(q["id"], ""))
        for n, q in enumerate(questions, start=1)
    )
    card = FormCard(
        ask_id=form.ask_id,
        tool_use_id=form.tool_use_id,
        status=form.status,
        questions=views,
        conversation_id=conversation.pk,
        message_id=message.pk,
        answer_message=(form.answer or {}).get("message", ""),
        version=form.version,
        changeable=changeable,
        editing=editing,
        earlier_messages=tuple(
            e["message_id"]
            for e in form.earlier or ()
            if isinstance(e, dict) and isinstance(e.get("message_id"), int)
        ),
    )
    return replace(card, error=draft.error) if draft and (pending or editing) else card


def _question(ask_id: str, n: int, q: FormQuestion, value: object, error: str) -> FormQuestionView:
    dom_id = f"{ask_id}-q{n}"
    chosen = set(value) if isinstance(value, list) else {value} if isinstance(value, str) else set()
    options = tuple(
        FormOption(o["label"], o["value"], o["value"] in chosen, f"{dom_id}-o{k}")
        for k, o in enumerate(q["options"], start=1)
    )
    return FormQuestionView(
        id=q["id"],
        question=q["question"],
        input_type=q["input_type"],
        multi_select=q["multi_select"],
        multiline=q["multiline"],
        required=q["required"],
        placeholder=q["placeholder"],
        name=f"answer-{q['id']}",
        dom_id=dom_id,
        options=options,
        value=value if isinstance(value, str) and q["input_type"] == "text" else "",
        error=error,
    )
