"""`ask_user_options` payloads (spec 004): validation, normalization, widgets, messages."""

from __future__ import annotations

import pytest

from questionnaires.protocol.ask_payload import AskInvalid, ask_validate, ask_widget, scale_value
from tests.support.asking import SPEC_PAYLOAD
from tests.support.asking import options as _options


def test_spec_payload_is_valid_and_kept():
    ask = ask_validate(SPEC_PAYLOAD)
    assert ask["type"] == "options"
    assert [o["value"] for o in ask["options"]] == ["none", "mild", "moderate", "severe"]
    assert ask["options"][1]["icon"] == "😐"
    assert ask["allow_free_text"] is True
    assert ask["free_text_placeholder"] == "请描述你的疼痛程度..."


@pytest.mark.parametrize(
    ("payload", "widget"),
    [
        ({"question": "q", "field": "f", "options": _options(2)}, "buttons"),
        ({"question": "q", "field": "f", "options": _options(5)}, "buttons"),
        ({"question": "q", "field": "f", "options": _options(6)}, "dropdown"),
        ({"question": "q", "field": "f", "type": "scale", "min": 1, "max": 10}, "slider"),
        ({"question": "q", "field": "f", "type": "boolean"}, "boolean"),
        ({"question": "q", "field": "f", "type": "free_text_only"}, "free_text"),
    ],
)
def test_widget_by_shape(payload, widget):
    assert ask_widget(ask_validate(payload)) == widget


def test_boolean_and_free_text_defaults():
    ask = ask_validate({"question": "q", "field": "f", "type": "boolean", "true_label": "Sí"})
    assert [(o["label"], o["value"]) for o in ask["options"]] == [("Sí", True), ("No", False)]
    assert ask_validate({"question": "q", "field": "f", "type": "free_text_only"})[
        "allow_free_text"
    ]


@pytest.mark.parametrize(
    ("payload", "codes"),
    [
        ("nope", {"ask.payload_not_object"}),
        ({"field": "f", "options": _options(2)}, {"ask.question_required"}),
        ({"question": "q", "options": _options(2)}, {"ask.field_required"}),
        ({"question": "q", "field": "f", "options": _options(1)}, {"ask.options_too_few"}),
        ({"question": "q", "field": "f", "options": "a,b"}, {"ask.options_too_few"}),
        ({"question": "q", "field": "f", "type": "poll"}, {"ask.type_invalid"}),
        (
            {"question": "q", "field": "f", "options": [{"label": "a", "value": 1}, "b"]},
            {"ask.option_not_object", "ask.options_too_few"} - {"ask.options_too_few"},
        ),
        (
            {"question": "q", "field": "f", "options": [{"label": "", "value": 1}] * 2},
            {"ask.option_label_required"},
        ),
        (
            {"question": "q", "field": "f", "options": [{"label": "a", "value": "x"}] * 2},
            {"ask.option_value_duplicate"},
        ),
        (
            {"question": "q", "field": "f", "options": [{"label": "a", "value": True}] * 2},
            {"ask.option_value_invalid"},
        ),
        (
            {"question": "q", "field": "f", "type": "scale", "min": 5, "max": 1},
            {"ask.scale_range_invalid"},
        ),
        ({"question": "q", "field": "f", "type": "scale", "min": "a"}, {"ask.scale_invalid"}),
        (
            {"question": "q", "field": "f", "options": _options(2), "allow_free_text": "yes"},
            {"ask.allow_free_text_invalid"},
        ),
    ],
)
def test_invalid_payloads_name_every_problem(payload, codes):
    with pytest.raises(AskInvalid) as info:
        ask_validate(payload)
    assert {e.code for e in info.value.errors} >= codes
    assert all(e.message for e in info.value.errors)


def test_errors_accumulate():
    with pytest.raises(AskInvalid) as info:
        ask_validate({"type": "scale", "min": 3, "max": 3})
    assert {e.code for e in info.value.errors} == {
        "ask.question_required",
        "ask.field_required",
        "ask.scale_range_invalid",
    }


def test_scale_value_snaps_and_bounds():
    ask = ask_validate({"question": "q", "field": "f", "type": "scale", "min": 0, "max": 10})
    assert scale_value(ask, "7") == 7
    assert scale_value(ask, 6.6) == 7
    assert scale_value(ask, "11") is None
    assert scale_value(ask, "x") is None
    assert scale_value(ask, True) is None


@pytest.mark.parametrize(
    "payload",
    [
        {"question": "q", "field": "f", "type": "boolean", "true_label": "Y!", "false_label": "N!"},
        {"question": "q", "field": "f", "type": "scale", "min": 0, "max": 4, "min_label": "lo"},
        {**SPEC_PAYLOAD, "options": [{**o, "synonyms": ["s"]} for o in SPEC_PAYLOAD["options"]]},
    ],
)
def test_normalizing_twice_changes_nothing(payload):
    once = ask_validate(payload)
    assert ask_validate(once) == once


def test_messages_and_default_labels_follow_the_language_without_django():
    chinese = ask_validate({"question": "q", "field": "f", "type": "boolean"}, lang="zh-hans")
    assert [o["label"] for o in chinese["options"]] == ["是", "否"]
    english = ask_validate({"question": "q", "field": "f", "type": "boolean"})
    assert [o["label"] for o in english["options"]] == ["Yes", "No"]
    with pytest.raises(AskInvalid) as info:
        ask_validate({"question": "q", "field": "f", "options": _options(51)}, lang="zh-hans")
    (error,) = info.value.errors
    assert (error.code, error.path) == ("ask.options_too_many", "options")
    assert error.message == "最多允许 50 个选项（实际 51 个）。"
    assert error.details == {"count": 51, "limit": 50}


def test_duplicate_option_values_name_the_first_one():
    options = [
        {"label": "a", "value": "x"},
        {"label": "b", "value": "y"},
        {"label": "c", "value": "x"},
    ]
    with pytest.raises(AskInvalid) as info:
        ask_validate({"question": "q", "field": "f", "options": options})
    (error,) = info.value.errors
    assert (error.path, error.details) == ("options[3].value", {"value": "x", "first_index": 1})
    assert error.message == 'Option value "x" is already used by option 1.'
