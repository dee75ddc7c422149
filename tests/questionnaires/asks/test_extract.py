from __future__ import annotations

import pytest

from questionnaires.asks.extract import CONFIDENCE_CONTAINED, CONFIDENCE_EXACT, extract
from questionnaires.protocol.ask_payload import ask_validate
from tests.support.asking import SPEC_PAYLOAD

PAIN = ask_validate(
    {
        **SPEC_PAYLOAD,
        "options": [
            {**SPEC_PAYLOAD["options"][0], "synonyms": ["不疼", "no pain"]},
            {**SPEC_PAYLOAD["options"][1], "synonyms": ["有点疼", "a little"]},
            *SPEC_PAYLOAD["options"][2:],
        ],
    }
)
SCALE = ask_validate({"question": "q", "field": "s", "type": "scale", "min": 0, "max": 10})
BOOL = ask_validate({"question": "q", "field": "b", "type": "boolean"})


@pytest.mark.parametrize(
    ("text", "value", "confidence"),
    [
        ("轻微疼痛", "mild", CONFIDENCE_EXACT),
        ("不疼", "none", CONFIDENCE_EXACT),
        ("我觉得有点疼吧", "mild", CONFIDENCE_CONTAINED),
        ("  MILD ", "mild", CONFIDENCE_EXACT),
        ("only a little, really", "mild", CONFIDENCE_CONTAINED),
    ],
)
def test_options_from_labels_synonyms_values(text, value, confidence):
    found = extract(PAIN, text)
    assert found is not None and (found.value, found.confidence) == (value, confidence)


@pytest.mark.parametrize("text", ["", "mild or moderate", "tomorrow", "轻微疼痛还是明显疼痛"])
def test_ambiguous_or_unknown_text_extracts_nothing(text):
    assert extract(PAIN, text) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7", 7),
        ("about 7/10", 7),
        ("I'd say seven", 7),
        ("七分", 7),
        ("10", 10),
        ("满分10分打3分", 3),
    ],
)
def test_scale_numbers(text, value):
    found = extract(SCALE, text)
    assert found is not None and found.value == value


@pytest.mark.parametrize("text", ["between 3 and 5", "42", "a lot"])
def test_scale_unreadable(text):
    assert extract(SCALE, text) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("yes", True), ("Yep!", True), ("no", False), ("nope", False), ("是的", True),
        ("对", True), ("没有", False), ("不是", False), ("不疼", False), ("有一点", True),
        ("no, not at all", False),
    ],
)  # fmt: skip
def test_yes_no_words_en_and_zh(text, value):
    found = extract(BOOL, text)
    assert found is not None and found.value is value


def test_free_text_only_never_extracts():
    ask = ask_validate({"question": "q", "field": "n", "type": "free_text_only"})
    assert extract(ask, "anything") is None
