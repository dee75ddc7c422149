from __future__ import annotations

import pytest

from questionnaires.asks.definitions import DefinitionError, definition_parse, definitions_all

TEXTS = dict.fromkeys(("intro", "summary_intro", "confirm_title", "confirm_question", "confirm_yes", "confirm_no", "correct_question", "correct_title", "correct_intro", "declined", "done", "not_understood", "skipped"), "t")  # fmt: skip


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


def _slot_with(reference):
    return _doc([{"label": "A", "field": "a", "question": "q", "type": "boolean", "reference": reference}])  # fmt: skip


def test_slot_reference_is_validated_and_normalized():
    definition = definition_parse(
        _slot_with({"title": " Why ", "snippet": "Because.", "url": "https://example.org/a"})
    )
    assert definition.slot("a").reference == {
        "title": "Why",
        "snippet": "Because.",
        "source": "",
        "url": "https://example.org/a",
    }
    assert "reference" not in definition.slot("a").ask
    assert definition_parse(_slot_with(None)).slot("a").reference is None


@pytest.mark.parametrize(
    ("reference", "problem"),
    [
        ({"title": "t", "snippet": "s", "url": "javascript:alert(1)"}, "slots[1].reference.url: reference.url_invalid"),
        ({"title": "t", "snippet": "s", "url": "file:///etc/passwd"}, "slots[1].reference.url: reference.url_invalid"),
        ({"snippet": "s"}, "slots[1].reference.title: reference.title_required"),
        ({"title": "t", "snippet": "s", "cite": "x"}, 'slots[1].reference: reference.unknown_keys (Unknown keys: "cite"; allowed: title, snippet, source, url.)'),
        ("see the guide", "slots[1].reference: reference.not_object"),
    ],
)  # fmt: skip
def test_invalid_slot_reference_has_clear_errors(reference, problem):
    with pytest.raises(DefinitionError) as info:
        definition_parse(_slot_with(reference), source="bad.yaml")
    assert str(info.value).startswith("bad.yaml: ")
    assert problem in str(info.value)


def test_shipped_references_in_both_languages():
    found = definitions_all()
    for key in ("knee", "project_kickoff"):
        en, zh = found[f"{key}.en"], found[f"{key}.zh-hans"]
        with_ref = [s.field for s in en.slots if s.reference]
        assert with_ref and with_ref == [s.field for s in zh.slots if s.reference]
        for slot in (*en.slots, *zh.slots):
            if slot.reference:
                assert slot.reference["source"] and not slot.reference["url"]
    assert found["knee.en"].slot("swelling").reference["title"] == "Why swelling matters"
    assert found["knee.zh-hans"].slot("swelling").reference["title"] == "为什么要问肿胀"


def test_a_yes_no_slot_without_labels_speaks_the_definition_language():
    """Labels no longer depend on whichever language was active when definitions loaded."""
    english = definitions_all()["project_kickoff.en"].slot("has_deadline").ask
    assert [o["label"] for o in english["options"]] == ["Yes", "No"]
    slot = {"label": "A", "field": "a", "question": "q", "type": "boolean"}
    chinese = definition_parse(_doc([slot], language="zh-hans")).slot("a").ask
    assert [o["label"] for o in chinese["options"]] == ["是", "否"]
