"""Intake definitions: YAML files in `questionnaires/asks/definitions/`, validated at load.

A file is `<id>.<language>.yaml` (e.g. `knee.zh-hans.yaml`). Top level: `id`, `language`,
`title`, `ask_per_turn` (1 or 2), the agent's texts (`intro`, `summary_intro`,
`confirm_title`, `confirm_question`, `confirm_yes`, `confirm_no`, `correct_question`,
`correct_title`, `correct_intro`, `declined`, `done`, `not_understood`, `skipped`) and `slots`. A slot: `field`, `label`, `question`,
`type` (`options` | `scale` | `boolean` | `free_text_only`), the ask's keys for its type
(`options` with `label`/`value`/`icon`/`synonyms`, `min`/`max`/`step`/`min_label`/
`max_label`, `true_label`/`false_label`, `allow_free_text`, `free_text_placeholder`),
`required` (default true), `order` (default: position), `when`, a simple dependency:
`{field: other, in: [values]}` or `{field: other, not_in: [values]}`, and `reference`, the
knowledge source shown as "Why we ask" when the slot is asked: `{title, snippet, source?,
url?}` (`url` only http(s); see `questionnaires.protocol.ask_reference`). A yes/no slot's
default labels are in the definition's `language`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from chat.core.metadata import AskPayload, intake_state
from chat.core.models import Conversation
from questionnaires.protocol.ask_payload import AskInvalid, ask_validate
from questionnaires.protocol.ask_reference import ReferenceInvalid, reference_validate
from questionnaires.protocol.jsontypes import Json

DIRECTORY = Path(__file__).resolve().parent / "definitions"
TEXT_KEYS = (
    "intro",
    "summary_intro",
    "confirm_title",
    "confirm_question",
    "confirm_yes",
    "confirm_no",
    "correct_question",
    "correct_title",
    "correct_intro",
    "declined",
    "done",
    "not_understood",
    "skipped",
)
SLOT_KEYS = {
    "field", "label", "question", "type", "options", "allow_free_text",
    "free_text_placeholder", "min", "max", "step", "min_label", "max_label", "true_label",
    "false_label", "required", "order", "when", "reference",
}  # fmt: skip
TOP_KEYS = {"id", "language", "title", "description", "ask_per_turn", "slots", *TEXT_KEYS}


class DefinitionError(Exception):
    """A definition file is invalid; the message names the file and every problem."""

    def __init__(self, source: str, problems: list[str]) -> None:
        super().__init__(f"{source}: " + "; ".join(problems))
        self.source = source
        self.problems = problems


@dataclass(frozen=True)
class Slot:
    field: str
    label: str
    required: bool
    order: int
    ask: AskPayload
    when: dict[str, Json] | None = None
    reference: dict[str, str] | None = None

    def applies(self, values: Mapping[str, Json]) -> bool:
        """Whether the slot is asked, given the values collected so far."""
        if not self.when:
            return True
        other = str(self.when["field"])
        if other not in values:
            return False
        listed = self.when.get("in", self.when.get("not_in"))
        inside = isinstance(listed, list) and values[other] in listed
        return inside if "in" in self.when else not inside


@dataclass(frozen=True)
class Definition:
    id: str
    language: str
    title: str
    description: str
    ask_per_turn: int
    texts: dict[str, str]
    slots: tuple[Slot, ...] = field(default_factory=tuple)

    def slot(self, name: str) -> Slot | None:
        return next((s for s in self.slots if s.field == name), None)

    @property
    def key(self) -> str:
        return f"{self.id}.{self.language}"


def definition_parse(data: object, *, source: str = "<definition>") -> Definition:
    """Validate a loaded YAML document; DefinitionError lists every problem."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise DefinitionError(source, ["the top level must be a mapping"])
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        problems.append(f"unknown top-level keys: {', '.join(unknown)}")
    for key in ("id", "language", "title", *TEXT_KEYS):
        if not isinstance(data.get(key), str) or not data[key].strip():
            problems.append(f"`{key}` must be a non-empty string")
    per_turn = data.get("ask_per_turn", 2)
    if per_turn not in (1, 2):
        problems.append("`ask_per_turn` must be 1 or 2 (spec 004: ask 1–2 questions a turn)")
    raw_slots = data.get("slots")
    slots: list[Slot] = []
    if not isinstance(raw_slots, list) or not raw_slots:
        problems.append("`slots` must be a non-empty list")
        raw_slots = []
    for index, raw in enumerate(raw_slots, start=1):
        slot = _slot(raw, index, problems, str(data.get("language") or "en"))
        if slot is not None:
            slots.append(slot)
    _check_references(slots, problems)
    if problems:
        raise DefinitionError(source, problems)
    slots.sort(key=lambda s: s.order)
    return Definition(
        id=data["id"].strip(),
        language=data["language"].strip().lower(),
        title=data["title"].strip(),
        description=str(data.get("description") or "").strip(),
        ask_per_turn=per_turn,
        texts={key: data[key].strip() for key in TEXT_KEYS},
        slots=tuple(slots),
    )


def _slot(raw: object, index: int, problems: list[str], lang: str) -> Slot | None:
    where = f"slots[{index}]"
    if not isinstance(raw, dict):
        problems.append(f"{where} must be a mapping")
        return None
    unknown = sorted(set(raw) - SLOT_KEYS)
    if unknown:
        problems.append(f"{where}: unknown keys {', '.join(unknown)}")
    label = raw.get("label")
    if not isinstance(label, str) or not label.strip():
        problems.append(f"{where}.label must be a non-empty string")
    required, order = raw.get("required", True), raw.get("order", index)
    if not isinstance(required, bool):
        problems.append(f"{where}.required must be true or false")
    if not isinstance(order, int) or isinstance(order, bool):
        problems.append(f"{where}.order must be an integer")
        order = index
    ask_keys = SLOT_KEYS - {"label", "required", "order", "when", "reference"}
    try:
        ask = ask_validate({k: v for k, v in raw.items() if k in ask_keys}, lang=lang)
    except AskInvalid as invalid:
        problems.extend(
            f"{where}.{e.path or 'slot'}: {e.code} ({e.message})" for e in invalid.errors
        )
        return None
    when = raw.get("when")
    if when is not None and not _when_ok(when):
        problems.append(f"{where}.when must be {{field: name, in: [...]}} or {{field, not_in}}")
        when = None
    reference = None
    if raw.get("reference") is not None:
        try:
            reference = reference_validate(raw["reference"], lang=lang)
        except ReferenceInvalid as invalid:
            problems.extend(f"{where}.{e.path}: {e.code} ({e.message})" for e in invalid.errors)
    return Slot(
        field=ask["field"],
        label=str(label or "").strip(),
        required=required is True,
        order=order,
        ask=ask,
        when=when,
        reference=reference,
    )


def _when_ok(when: object) -> bool:
    if not isinstance(when, dict) or not isinstance(when.get("field"), str):
        return False
    keys = set(when) - {"field"}
    return len(keys) == 1 and keys <= {"in", "not_in"} and isinstance(when[keys.pop()], list)


def _check_references(slots: list[Slot], problems: list[str]) -> None:
    fields = [s.field for s in slots]
    for name in sorted({f for f in fields if fields.count(f) > 1}):
        problems.append(f"field `{name}` is defined twice")
    order = {s.field: s.order for s in slots}
    for slot in slots:
        if slot.when is None:
            continue
        other = slot.when["field"]
        if other not in order:
            problems.append(f"`{slot.field}`.when refers to unknown field `{other}`")
        elif order[other] >= slot.order:
            problems.append(f"`{slot.field}`.when must refer to a field asked before it")


def definition_load(path: Path) -> Definition:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DefinitionError(path.name, [str(exc)]) from None
    definition = definition_parse(data, source=path.name)
    if path.name != f"{definition.key}.yaml":
        raise DefinitionError(path.name, [f"file name must be `{definition.key}.yaml`"])
    return definition


@functools.cache
def definitions_all() -> dict[str, Definition]:
    """Every shipped definition by key (`knee.en`); an invalid file fails loudly."""
    return {d.key: d for d in map(definition_load, sorted(DIRECTORY.glob("*.yaml")))}


def definition_ids() -> list[tuple[str, str]]:
    """(id, title) of each definition, titled in English when there is an English file."""
    titles: dict[str, str] = {}
    for definition in definitions_all().values():
        if definition.id not in titles or definition.language == "en":
            titles[definition.id] = definition.title
    return sorted(titles.items())


def definition_choices(language: str) -> list[tuple[str, str]]:
    """(id, title) of each definition, titled in `language` when a definition has it."""
    lang = "zh-hans" if language.lower().startswith("zh") else "en"
    own = {d.id: d.title for d in definitions_all().values() if d.language == lang}
    return [(key, own.get(key, title)) for key, title in definition_ids()]


def definition_for(definition_id: str, language: str) -> Definition | None:
    """The definition in the conversation's language, else in any language."""
    found = definitions_all()
    lang = "zh-hans" if language.lower().startswith("zh") else "en"
    exact = found.get(f"{definition_id}.{lang}")
    return exact or next((d for d in found.values() if d.id == definition_id), None)


def conversation_definition(conversation: Conversation) -> Definition | None:
    chosen = intake_state(conversation).get("definition")
    return definition_for(chosen, conversation.language) if chosen else None


def slot_ask_for_conversation(conversation: Conversation, field_name: str) -> AskPayload | None:
    definition = conversation_definition(conversation)
    slot = definition.slot(field_name) if definition else None
    return slot.ask if slot else None
