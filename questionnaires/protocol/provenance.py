"""Provenance of answers and the envelope keys beyond DESIGN §4.10 (issue 27).

Every answer in a response envelope says how it came to be (``provenance``):

- ``chosen``: the person picked an option (or options), the preselected one included;
- ``default``: the person never touched that question and its default was sent as it was
  ("kept the default", DESIGN §4.14): a click on the preselected option, or a change and
  back, is ``chosen``;
- ``free_text``: the person typed it (a free-text answer other than the default, or
  "Other" with its text);
- ``skipped``: the person skipped this question (its ``answer`` is empty);
- ``amended``: the person changed this answer after sending it (a new version of the
  card's answer, which carries ``amends``).

An envelope may also carry ``status: "declined"`` (the person would rather not answer:
MCP elicitation's *decline*; ``answers`` is empty), ``amends`` (the id of the user
message whose answer this one replaces) and ``version`` (1 for a first answer, 2 and
more for changes).  All of them are additive: the four keys of §4.10 keep their names,
order and meaning, so a reader that ignores unknown keys reads every envelope as before.

The same five words serve structured answers (spec 004 asks) and MCP elicitation
results, so an agent reads one vocabulary whichever way it asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from .segments import Question

Provenance = Literal["chosen", "default", "free_text", "skipped", "amended"]

CHOSEN: Final = "chosen"
DEFAULT: Final = "default"
FREE_TEXT: Final = "free_text"
SKIPPED: Final = "skipped"
AMENDED: Final = "amended"
PROVENANCES: Final[tuple[str, ...]] = (CHOSEN, DEFAULT, FREE_TEXT, SKIPPED, AMENDED)

SUBMITTED: Final = "submitted"
DECLINED: Final = "declined"


def answer_provenance(
    question: Question, item: Mapping[str, object], *, touched: bool = False
) -> Provenance:
    """How a built answer ``item`` (one entry of ``answers``) came to be.

    ``default`` only when the question was not ``touched`` (the client reports every
    question the person interacted with) *and* the value equals the question's default: the
    server decides, so a client can't claim a default for a value that differs from it.
    A touched question that ends on its default is ``chosen`` (``free_text`` for text)."""
    if question.type == "free_text":
        typed = item.get("answer")
        typed = typed if isinstance(typed, str) else ""
        default = question.default if isinstance(question.default, str) else ""
        return DEFAULT if typed == default.strip() and not touched else FREE_TEXT
    if "other_text" in item:
        return FREE_TEXT
    if question.type == "multi_choice":
        values = item.get("values")
        chosen = tuple(values) if isinstance(values, list) else ()
        default_values = question.default if isinstance(question.default, tuple) else ()
        in_order = tuple(v for v in question.option_values() if v in default_values)
        return DEFAULT if chosen == in_order and not touched else CHOSEN
    value = item.get("value")
    is_default = bool(question.default) and value == question.default
    return DEFAULT if is_default and not touched else CHOSEN


def same_answer(old: Mapping[str, object], new: Mapping[str, object]) -> bool:
    """Whether two answer items of one question say the same thing (for ``amended``)."""
    if (old.get("provenance") == SKIPPED) != (new.get("provenance") == SKIPPED):
        return False
    return old.get("answer") == new.get("answer") and old.get("other_text") == new.get("other_text")


PROVENANCE_META_KEY: Final = "io.questionnaires/provenance"
"""Where an MCP elicitation result carries its provenance: under ``_meta`` (the content
must match the server's schema, so the marks can't go into it)."""


def field_provenance(*, default: object, value: object, present: bool, typed: bool) -> Provenance:
    """How one elicitation field's value came to be: absent → ``skipped``; the schema's
    default left as it was → ``default``; a typed string → ``free_text``; else ``chosen``."""
    if not present:
        return SKIPPED
    if default is not None and value == default:
        return DEFAULT
    return FREE_TEXT if typed else CHOSEN
