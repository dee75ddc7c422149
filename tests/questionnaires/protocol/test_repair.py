"""Reading a typed reply against a waiting question (questionnaires.protocol.repair)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from questionnaires.protocol.repair import (
    fields_of,
    intent,
    match_reply,
    normalize,
)


def _choice(title, *labels, synonyms=None):
    synonyms = synonyms or {}
    return {
        "title": title,
        "oneOf": [
            {"const": label.lower(), "title": label}
            | ({"examples": synonyms[label]} if label in synonyms else {})
            for label in labels
        ],
    }


def inline(**questions):
    """An inline card's response schema (questionnaires.inline.interrupts)."""
    return {
        "type": "object",
        "properties": {
            "answers": {"type": "object", "properties": questions},
            "other_text": {"type": "object"},
            "skipped": {"type": "array"},
            "typed": {"type": "string"},
        },
    }


def ask(value):
    """An ask's response schema (questionnaires.asks.interrupts)."""
    return {"type": "object", "properties": {"value": value, "text": {"type": "string"}}}


ISLAND = inline(q1=_choice("Which island?", "Canaries", "Madeira", "Azores"))


@pytest.mark.parametrize(
    ("text", "value", "exact"),
    [
        ("Canaries", "canaries", True),
        ("  CANARIES!! ", "canaries", True),
        ("ｃａｎａｒｉｅｓ", "canaries", True),  # full-width
        ("the canaries please", "canaries", False),
        ("I'd like Madeira", "madeira", False),
    ],
)
def test_an_option_label_is_read(text, value, exact):
    found = match_reply(ISLAND, text)
    assert found is not None
    assert found.payload == {"answers": {"q1": value}} and found.exact is exact


@pytest.mark.parametrize(
    "text", ["canaries or madeira", "what's the weather like?", "", "   ", "canariesmadeira"]
)
def test_no_option_or_two_options_read_nothing(text):
    assert match_reply(ISLAND, text) is None


def test_synonyms_and_values_count_and_a_longer_name_wins():
    schema = ask(
        _choice(
            "Pain?",
            "No pain",
            "Mild pain",
            synonyms={"No pain": ["no", "not at all"], "Mild pain": ["a bit", "pain"]},
        )
    )
    assert match_reply(schema, "not at all").payload == {"value": "no pain"}
    # "pain" (Mild pain's synonym) is inside "no pain": the longer name wins
    assert match_reply(schema, "there is no pain really").payload == {"value": "no pain"}
    assert match_reply(schema, "a bit").exact


def test_chinese_labels_are_found_inside_a_sentence():
    schema = ask(_choice("去哪个岛？", "加那利群岛", "马德拉", synonyms={"加那利群岛": ["加那利"]}))
    assert match_reply(schema, "加那利").payload == {"value": "加那利群岛"}
    assert match_reply(schema, "我想去马德拉吧").payload == {"value": "马德拉"}


@pytest.mark.parametrize(
    ("text", "value", "exact"),
    [("7", 7, True), ("about 7/10", 7, False), ("seven", 7, False), ("七", 7, False)],
)
def test_numbers_in_range_answer_a_scale(text, value, exact):
    schema = ask({"type": "number", "minimum": 0, "maximum": 10, "title": "Pain score"})
    found = match_reply(schema, text)
    assert found is not None and found.payload == {"value": value} and found.exact is exact


@pytest.mark.parametrize("text", ["11", "-1", "3 or 4", "2.5 nights"])
def test_numbers_out_of_range_or_two_of_them_read_nothing(text):
    schema = ask({"type": "integer", "minimum": 0, "maximum": 10})
    assert match_reply(schema, text) is None


BOOLEAN = ask(
    {
        "type": "boolean",
        "title": "Children?",
        "oneOf": [
            {"const": True, "title": "With children"},
            {"const": False, "title": "Adults only"},
        ],
    }
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("yes", True),
        ("Y", True),
        ("sure", True),
        ("ok", True),
        ("是", True),
        ("好", True),
        ("对", True),
        ("no", False),
        ("n", False),
        ("不", False),
        ("否", False),
        ("不是", False),
        ("Adults only", False),
        ("with children", True),
    ],
)
def test_yes_and_no_in_english_and_chinese(text, value):
    found = match_reply(BOOLEAN, text)
    assert found is not None and found.payload == {"value": value}


def test_two_yes_no_questions_and_a_yes_is_ambiguous():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "boolean"}, "b": {"type": "boolean"}},
    }
    assert match_reply(schema, "yes") is None


def test_a_card_with_two_questions_is_filled_never_answered_at_once():
    schema = inline(
        q1=_choice("Which island?", "Canaries", "Madeira"),
        q2={"title": "Notes", "type": "string"},
        q3=_choice("When?", "Spring", "Autumn"),
    )
    found = match_reply(schema, "Madeira")
    assert found.payload == {"answers": {"q1": "madeira"}}
    assert not found.exact  # three questions: confirm with a click
    both = match_reply(schema, "Madeira in spring")
    assert both.payload == {"answers": {"q1": "madeira", "q3": "spring"}}


def test_a_multiple_choice_collects_every_option_named():
    schema = inline(
        q1={
            "type": "array",
            "title": "Which?",
            "items": _choice("", "Fenced YAML", "XML+JSON", "questionnaire_async"),
        }
    )
    found = match_reply(schema, "fenced yaml and questionnaire async")
    assert found.payload == {"answers": {"q1": ["fenced yaml", "questionnaire_async"]}}


def test_free_text_fields_are_never_matched():
    assert fields_of(inline(q1={"type": "string", "title": "Anything?"})) == ()
    assert match_reply(inline(q1={"type": "string"}), "anything at all") is None


@pytest.mark.parametrize(
    ("text", "kind", "rest"),
    [
        ("never mind", "skip", ""),
        ("Skip that.", "skip", ""),
        ("skip", "skip", ""),
        ("算了", "skip", ""),
        ("跳过", "skip", ""),
        ("actually, make it Madeira", "amend", "madeira"),
        ("Actually it's the Azores", "amend", "the azores"),
        ("不对，是马德拉", "amend", "马德拉"),
        ("改成亚速尔", "amend", "亚速尔"),
        ("Canaries", "answer", ""),
        ("actually", "answer", ""),
        ("actuality matters", "answer", ""),
        ("skipping stones is fun", "answer", ""),
    ],
)
def test_intent(text, kind, rest):
    assert intent(text).kind == kind and intent(text).rest == rest


# --- properties ------------------------------------------------------------------------------

labels = st.text(
    alphabet=st.characters(categories=("L", "N"), max_codepoint=0x9FFF), min_size=1, max_size=12
)
replies = st.text(max_size=200)


@st.composite
def choice_schemas(draw):
    names = draw(st.lists(labels, min_size=1, max_size=6, unique_by=normalize))
    return ask({"title": "Q", "oneOf": [{"const": i, "title": n} for i, n in enumerate(names)]})


@settings(max_examples=300, deadline=None)
@given(schema=choice_schemas(), text=replies)
def test_random_text_never_crashes_and_never_picks_an_option_it_does_not_contain(schema, text):
    found = match_reply(schema, text)
    if found is None:
        return
    (option,) = [
        o for o in schema["properties"]["value"]["oneOf"] if o["const"] == found.payload["value"]
    ]
    name = normalize(option["title"])
    said = normalize(text)
    assert name and name in said  # the chosen option's name is in the reply


@settings(max_examples=200, deadline=None)
@given(
    schema=choice_schemas(),
    index=st.integers(min_value=0, max_value=5),
    before=st.sampled_from(["", "  ", "!", "。"]),
)
def test_an_option_typed_as_it_is_shown_is_read_exactly(schema, index, before):
    options = schema["properties"]["value"]["oneOf"]
    option = options[index % len(options)]
    names = [normalize(o["title"]) for o in options]
    if any(n != normalize(option["title"]) and normalize(option["title"]) in n for n in names):
        return  # its label is part of another label's: reading it alone is still exact
    found = match_reply(schema, before + option["title"] + before)
    assert found is not None and found.exact and found.payload == {"value": option["const"]}


@settings(max_examples=200, deadline=None)
@given(
    low=st.integers(-50, 50),
    span=st.integers(0, 50),
    text=replies,
)
def test_a_number_read_is_always_in_range(low, span, text):
    schema = ask({"type": "number", "minimum": low, "maximum": low + span})
    found = match_reply(schema, text)
    if found is not None:
        assert low <= found.payload["value"] <= low + span


@settings(max_examples=300, deadline=None)
@given(
    schema=st.recursive(
        st.none() | st.booleans() | st.text() | st.integers(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=20,
    ),
    text=replies,
)
def test_any_schema_at_all_never_crashes(schema, text):
    match_reply(schema, text)
    fields_of(schema)
    intent(text)


@pytest.mark.parametrize(
    ("text", "certain"),
    [
        ("Canaries", True),
        ("the canaries please", True),  # two words around it
        ("I think the Azores would be lovely", False),  # a sentence: confirm with a click
        ("not the Azores", False),  # a negation is never taken without a click
        ("anything but Madeira", False),
        ("don't pick madeira", False),
    ],
)
def test_certain_means_one_click_is_not_needed(text, certain):
    found = match_reply(ISLAND, text)
    assert found is not None and found.certain is certain


def test_certain_in_chinese_counts_characters():
    schema = ask(_choice("去哪个岛？", "马德拉", "加那利"))
    assert match_reply(schema, "加那利吧").certain
    assert not match_reply(schema, "我想去马德拉吧").certain
    assert not match_reply(schema, "不去马德拉").certain


@pytest.mark.parametrize(
    ("text", "certain"), [("5", True), ("5 nights", True), ("maybe about 5 or so nights", False)]
)
def test_certain_numbers(text, certain):
    schema = ask({"type": "integer", "minimum": 1, "maximum": 14})
    assert match_reply(schema, text).certain is certain
