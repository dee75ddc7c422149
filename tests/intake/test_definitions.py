from __future__ import annotations

import pytest

from chat.intake.definitions import DefinitionError, definition_parse, definitions_all

TEXTS = dict.fromkeys(("intro", "summary_intro", "confirm_title", "confirm_question", "confirm_yes", "confirm_no", "correct_question", "done", "not_understood", "skipped"), "t")  # fmt: skip


def _doc(slots, **extra):
    return {"id": "x", "language": "en", "title": "X", **TEXTS, "slots": slots, **extra}


def test_shipped_definitions_load():
    keys = set(definitions_all())
    assert {"knee.en", "knee.zh-hans", "project_kickoff.en", "project_kickoff.zh-hans"} <= keys
    knee = definitions_all()["knee.zh-hans"]
    assert knee.slot("pain_level").ask["options"][1]["label"] == "轻微疼痛"


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        ("just text", "top level must be a mapping"),
        (_doc([]), "`slots` must be a non-empty list"),
        (_doc([{"field": "a", "question": "q", "type": "boolean"}]), "slots[1].label"),
        (_doc([{"label": "A", "field": "a", "question": "q", "type": "x"}]), "ask.type_invalid"),
        (
            _doc([{"label": "A", "field": "a", "question": "q", "options": [{"label": "o"}]}]),
            "ask.options_too_few",
        ),
        (
            _doc([{"label": "A", "field": "a", "question": "q", "type": "boolean", "when": {"field": "b", "in": [1]}}]),
            "unknown field `b`",
        ),
        (
            _doc(
                [
                    {"label": "A", "field": "a", "question": "q", "type": "boolean"},
                    {"label": "B", "field": "a", "question": "q", "type": "boolean"},
                ]
            ),
            "defined twice",
        ),
        (_doc([{"label": "A", "field": "a", "question": "q", "type": "boolean", "colour": 1}]), "unknown keys colour"),
        (_doc([{"label": "A", "field": "a", "question": "q", "type": "boolean"}], ask_per_turn=3), "ask_per_turn"),
        ({**_doc([{"label": "A", "field": "a", "question": "q", "type": "boolean"}]), "done": ""}, "`done`"),
    ],
)  # fmt: skip
def test_invalid_definitions_have_clear_errors(doc, problem):
    with pytest.raises(DefinitionError) as info:
        definition_parse(doc, source="bad.yaml")
    assert str(info.value).startswith("bad.yaml: ")
    assert problem in str(info.value)
