"""The repair prompt below the conversation (templates/questionnaires/repair/region.html):
a question filled from typed words, to confirm with one click, or a waiting question asked
again after a digression — the same question (its wait), drawn from its response schema."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _

from chat.core.models import Conversation
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.protocol.repair import Field, fields_of
from questionnaires.repair.models import RepairOutcome
from questionnaires.repair.services import open_prompt, reprompt_limit


@dataclass(frozen=True)
class Choice:
    index: str  # posted value
    label: str
    selected: bool


@dataclass(frozen=True)
class PromptField:
    name: str  # f-<n>
    kind: str  # choice | multi | boolean | number
    title: str
    choices: tuple[Choice, ...] = ()
    value: str = ""
    minimum: str = ""
    maximum: str = ""


@dataclass(frozen=True)
class PromptView:
    repair_id: int
    mode: str  # proposal | reask
    heading: str
    note: str
    typed_text: str
    fields: tuple[PromptField, ...]
    final: bool = False  # the last time it is asked


def _at(payload: object, path: tuple[str, ...]) -> JsonValue | None:
    node = payload
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node  # type: ignore[return-value]


def _number(n: float | None) -> str:
    if n is None:
        return ""
    return str(int(n)) if float(n).is_integer() else str(n)


def _field_view(index: int, field: Field, payload: object) -> PromptField:
    name = f"f-{index}"
    value = _at(payload, field.path)
    if field.kind in ("choice", "multi"):
        chosen = value if isinstance(value, list) else [value]
        return PromptField(
            name,
            field.kind,
            field.title,
            tuple(
                Choice(str(i), o.label, value is not None and o.value in chosen)
                for i, o in enumerate(field.options)
            ),
        )
    if field.kind == "boolean":  # the card's own words for yes and no, when it has them
        labels = {o.value: o.label for o in field.options}
        return PromptField(
            name,
            "boolean",
            field.title,
            (
                Choice("true", str(labels.get(True, _("Yes"))), value is True),
                Choice("false", str(labels.get(False, _("No"))), value is False),
            ),
        )
    shown = _number(value) if isinstance(value, int | float) and not isinstance(value, bool) else ""
    return PromptField(
        name,
        "number",
        field.title,
        value=shown,
        minimum=_number(field.minimum),
        maximum=_number(field.maximum),
    )


def prompt_for(conversation: Conversation) -> PromptView | None:
    found = open_prompt(conversation)
    if found is None:
        return None
    row, waiting = found
    question = waiting.pending.message or _("the question above")
    fields = tuple(
        _field_view(i, f, row.payload)
        for i, f in enumerate(fields_of(waiting.pending.response_schema))
    )
    if row.outcome == RepairOutcome.PROPOSED:
        return PromptView(
            row.pk,
            "proposal",
            _("Is this your answer to “%(question)s”?") % {"question": question},
            _("Filled in from what you wrote. Check it and confirm with one click."),
            row.typed_text,
            fields,
        )
    limit = reprompt_limit(conversation)
    final = row.reprompts >= limit
    if final:
        heading = _(
            "Last time I ask: “%(question)s” — answer or skip it; after your next message "
            "we go on without it."
        )
    elif row.reprompts >= 2:
        heading = _("I still need your answer to “%(question)s”. Choose below, or skip it.")
    else:
        heading = _("Still waiting for your answer: %(question)s")
    return PromptView(
        row.pk,
        "reask",
        heading % {"question": question},
        _("You can also type your answer in the message box."),
        row.typed_text,
        fields,
        final,
    )
