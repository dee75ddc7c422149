"""The MCP elicitation schema subset: what is shown, what is refused, how input is read."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from questionnaires.protocol.catalogs import CATALOGS
from questionnaires.protocol.elicitation_form import (
    answer_rows,
    field_views,
    form_read,
    humanise,
    validate_content,
)
from questionnaires.protocol.elicitation_guards import secret_words
from questionnaires.protocol.elicitation_schema import (
    field_message,
    message_secret,
    schema_check,
    schema_fields,
    validate_value,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "title": "Your name",
            "description": "As on the badge",
            "minLength": 2,
            "maxLength": 20,
            "default": "Ann",
        },
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date", "default": "2025-01-02"},
        "at": {"type": "string", "format": "date-time"},
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "minimum": 0.5, "maximum": 9.5, "default": 1.5},
        "ok": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "l",
        },
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["a"],
        },
        "pets": {
            "type": "array",
            "items": {
                "anyOf": [{"const": "cat", "title": "Cat"}, {"const": "dog", "title": "Dog"}]
            },
        },
    },
    "required": ["name", "age", "tags"],
}
GOOD = {
    "answer-name": ["Bob"],
    "answer-email": ["b@example.com"],
    "answer-site": ["https://x.org"],
    "answer-day": ["2025-02-03"],
    "answer-at": ["2025-02-03T10:30"],
    "answer-code": ["ABC"],
    "answer-age": ["42"],
    "answer-score": ["2.5"],
    "answer-ok": ["true"],
    "answer-color": ["g"],
    "answer-size": ["s"],
    "answer-tags": ["a", "b"],
    "answer-pets": ["dog"],
}


def fields():
    check = schema_check(SCHEMA)
    assert check.ok, check.problems
    return check.fields


def test_every_type_of_the_subset_is_read():
    kinds = {f.name: f.kind for f in fields()}
    assert kinds == {
        "name": "string",
        "email": "string",
        "site": "string",
        "day": "string",
        "at": "string",
        "code": "string",
        "age": "integer",
        "score": "number",
        "ok": "boolean",
        "color": "select",
        "size": "select",
        "tags": "multiselect",
        "pets": "multiselect",
    }
    by_name = {f.name: f for f in fields()}
    assert by_name["name"].title == "Your name" and by_name["email"].title == "email"
    assert [o.label for o in by_name["color"].options] == ["Red", "Green"]
    assert by_name["tags"].default == ["a"] and by_name["name"].required


@pytest.mark.parametrize(
    ("zone", "typed", "sent"),
    [
        ("Asia/Shanghai", "2026-12-04T09:30", "2026-12-04T09:30:00+08:00"),
        ("UTC", "2026-12-04T09:30", "2026-12-04T09:30:00+00:00"),
        # the offset of that date, not of today: summer and winter time in Berlin
        ("Europe/Berlin", "2026-07-01T09:30", "2026-07-01T09:30:00+02:00"),
        ("Europe/Berlin", "2026-01-15T09:30:15", "2026-01-15T09:30:15+01:00"),
        ("America/New_York", "2026-03-08T12:00:00.250", "2026-03-08T12:00:00.250000-04:00"),
    ],
)
def test_a_local_date_time_is_on_the_persons_clock(zone, typed, sent):
    """Issue 33.3: a browser in Asia/Shanghai typing 09:30 sent `09:30:00+00:00`."""
    spec = [f for f in fields() if f.name == "at"]
    read = form_read(spec, {"answer-at": [typed]}, zone=ZoneInfo(zone))
    assert read.ok and read.content == {"at": sent}


def test_an_impossible_local_date_time_is_refused_not_shifted():
    spec = [f for f in fields() if f.name == "at"]
    read = form_read(spec, {"answer-at": ["2026-02-30T09:30"]}, zone=ZoneInfo("Asia/Tokyo"))
    assert not read.ok and read.values == {"at": ["2026-02-30T09:30"]}


def test_good_values_become_typed_content():
    read = form_read(fields(), GOOD, zone=ZoneInfo("Asia/Shanghai"))
    assert read.ok, read.errors
    assert read.content == {
        "name": "Bob",
        "email": "b@example.com",
        "site": "https://x.org",
        "day": "2025-02-03",
        "at": "2025-02-03T10:30:00+08:00",
        "code": "ABC",
        "age": 42,
        "score": 2.5,
        "ok": True,
        "color": "g",
        "size": "s",
        "tags": ["a", "b"],
        "pets": ["dog"],
    }
    assert validate_content(fields(), read.content) == {}


@pytest.mark.parametrize(
    ("name", "values", "code"),
    [
        ("name", [""], "required"),
        ("name", ["B"], "too_short"),
        ("name", ["B" * 21], "too_long"),
        ("email", ["nope"], "invalid_email"),
        ("site", ["not a uri"], "invalid_uri"),
        ("day", ["2025-13-01"], "invalid_date"),
        ("at", ["yesterday"], "invalid_datetime"),
        ("code", ["abc"], "pattern_mismatch"),
        ("age", ["x"], "not_a_number"),
        ("age", ["1.5"], "not_an_integer"),
        ("age", ["-1"], "below_minimum"),
        ("age", ["151"], "above_maximum"),
        ("color", ["blue"], "not_an_option"),
        ("tags", [], "required"),
        ("tags", ["a", "b", "c"], "too_many_items"),
        ("tags", ["a", "a"], "duplicate_items"),
        ("pets", ["fish"], "not_an_option"),
    ],
)
def test_bad_values_get_a_code_and_keep_the_input(name, values, code):
    read = form_read(fields(), {**GOOD, f"answer-{name}": values})
    assert read.errors[name].code == code
    assert read.values[name] == values
    assert read.errors[name].message("en") and read.errors[name].message("zh-hans")


def test_unchecked_boolean_is_false_and_empty_optional_fields_are_left_out():
    read = form_read(fields(), {"answer-name": ["Bob"], "answer-age": ["3"], "answer-tags": ["c"]})
    assert read.ok
    assert read.content == {"name": "Bob", "age": 3, "ok": False, "tags": ["c"]}


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "object", "properties": {}},
        {"type": "array", "items": {"type": "integer"}},
        {"type": "string", "format": "ipv4"},
        {"type": "string", "$ref": "#/x"},
        {"type": "number", "exclusiveMinimum": 1},
        {"type": "string", "enum": [1, 2]},
        {"type": "string", "enum": ["a"], "enumNames": ["A", "B"]},
        {"type": "string", "pattern": "("},
        {"type": "integer", "default": "x"},
        {"type": "string", "minLength": 5, "maxLength": 1},
        {"type": "null"},
        {"anyOf": [{"type": "string"}]},
        "string",
    ],
)
def test_schemas_outside_the_subset_are_refused(prop):
    check = schema_check({"type": "object", "properties": {"x": prop}})
    assert not check.ok and not check.secret
    assert all(p.code.startswith("schema_") for p in check.problems)


@pytest.mark.parametrize(
    "schema",
    [
        None,
        [],
        {"type": "array"},
        {"type": "object", "properties": {}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
        {"type": "object", "properties": {"a": {"type": "string"}}, "allOf": []},
    ],
)
def test_broken_top_levels_are_refused(schema):
    assert not schema_check(schema).ok


@pytest.mark.parametrize(
    ("name", "prop"),
    [
        ("pw", {"type": "string", "format": "password"}),
        ("password", {"type": "string"}),
        ("apiKey", {"type": "string"}),
        ("API_KEY", {"type": "string"}),
        ("x", {"type": "string", "title": "Access token"}),
        ("x", {"type": "string", "description": "Your client secret"}),
        ("x", {"type": "string", "title": "请输入密码"}),
        ("x", {"type": "string", "title": "Private key"}),
    ],
)
def test_secret_fields_are_refused(name, prop):
    check = schema_check({"type": "object", "properties": {name: prop}})
    assert check.secret


@pytest.mark.parametrize("name", ["secretary", "keyboard", "tokenize_me_not", "passage"])
def test_words_that_only_contain_a_secret_word_are_fine(name):
    # "tokenize" is one word; only whole words count
    assert schema_check({"type": "object", "properties": {name: {"type": "string"}}}).ok


def test_field_views_pick_inputs_and_defaults():
    views = {v.name: v for v in field_views(fields(), prefix="e1")}
    assert views["answer-name"].value == "Ann" and views["answer-name"].help == "As on the badge"
    assert views["answer-email"].input_type == "email"
    assert views["answer-site"].input_type == "url"
    assert views["answer-day"].input_type == "date" and views["answer-day"].value == "2025-01-02"
    assert views["answer-at"].input_type == "datetime-local"
    assert views["answer-age"].input_type == "number" and views["answer-age"].step == "1"
    assert views["answer-score"].value == "1.5" and views["answer-score"].step == "any"
    assert views["answer-ok"].input_type == "checkbox" and views["answer-ok"].checked
    assert views["answer-color"].input_type == "radio"
    assert [o.checked for o in views["answer-size"].options] == [False, True]
    assert views["answer-tags"].input_type == "checkboxes"
    assert [o.checked for o in views["answer-tags"].options] == [True, False, False]


def test_many_options_become_a_select_and_typed_values_win_over_defaults():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "string", "enum": [str(i) for i in range(10)], "default": "1"}
        },
    }
    (view,) = field_views(schema_check(schema).fields, prefix="p", values={"n": ["7"]})
    assert view.input_type == "select"
    assert [o.value for o in view.options if o.checked] == ["7"]


def test_answer_rows_read_like_the_card():
    rows = answer_rows(
        fields(),
        {"name": "Bob", "ok": False, "color": "g", "tags": ["a", "b"], "age": 3},
        yes="Yes",
        no="No",
    )
    # Untitled fields and enum values read as words ("age" → "Age"); titles win.
    assert rows == (
        ("Your name", "Bob"),
        ("Age", "3"),
        ("Ok", "No"),
        ("Color", "Green"),
        ("Tags", "A, B"),
    )


def test_raw_names_and_enum_values_are_humanised_only_without_a_title():
    assert humanise("outdoor_terrace") == "Outdoor terrace"
    assert humanise("window-seat") == "Window seat"
    assert humanise("iPhone") == "iPhone" and humanise("USB_C") == "USB_C"  # written for people
    assert humanise("") == ""


def test_every_code_has_both_languages():
    codes = [key.split(".", 1)[1] for key in CATALOGS["en"] if key.startswith("elicitation.")]
    assert "required" in codes
    for code in codes:
        for lang in ("en", "zh-hans"):
            message = field_message(code, lang, min=1, max=2, minimum=0, maximum=9)
            assert message and "elicitation." not in message and "?" not in message


TEXT = st.text(max_size=40)


@given(
    st.dictionaries(
        st.sampled_from([f"answer-{f}" for f in SCHEMA["properties"]] + ["x"]),
        st.lists(TEXT, max_size=4),
    )
)
def test_any_post_is_either_valid_content_or_errors_never_a_crash(data):
    read = form_read(fields(), data)
    if read.ok:
        assert validate_content(fields(), read.content) == {}
    else:
        assert set(read.errors) <= set(SCHEMA["properties"])


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | TEXT,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
        max_leaves=10,
    )
)
def test_any_json_schema_is_checked_without_a_crash(schema):
    check = schema_check({"type": "object", "properties": {"f": schema}})
    assert check.ok or check.problems


# --- issue 22: secrets in any spelling, server regexes in linear time --------------------

SECRET_SPELLINGS = [
    "pass\u200bword",  # a zero-width space
    "pass\u00adword",  # a soft hyphen
    "p\u0430ssw\u043erd",  # Cyrillic а and о
    "ＰＡＳＳＷＯＲＤ",  # full-width
    "Passcode",
    "Your PIN",
    "Пароль",
    "パスワード",
    "contraseña",
    "Mot de passe",
    "Passwort",
    "密码",
    "口令",
    "비밀번호",
    "hasło",
    "κωδικός πρόσβασης",
    "كلمة المرور",
]


@pytest.mark.parametrize("title", SECRET_SPELLINGS)
def test_secret_words_are_found_however_they_are_written(title):
    prop = {"type": "string", "title": title}
    check = schema_check({"type": "object", "properties": {"value": prop}})
    assert check.secret, title


@pytest.mark.parametrize("text", ["Your name", "Opinion", "Spinner", "Secretary", "Shopping"])
def test_ordinary_words_are_not_secrets(text):
    assert secret_words(text) == ""


def test_a_message_asking_for_a_secret_counts_when_it_can_be_typed():
    text = schema_check({"type": "object", "properties": {"value": {"type": "string"}}})
    choice = schema_check(
        {"type": "object", "properties": {"reset": {"type": "boolean", "title": "Reset?"}}}
    )
    assert message_secret("Enter your Пароль below", text.fields) == "пароль"
    assert message_secret("Reset your password?", choice.fields) == ""


def _pattern_schema(pattern: str, default: str | None = None) -> dict:
    prop: dict = {"type": "string", "pattern": pattern}
    if default is not None:
        prop["default"] = default
    return {"type": "object", "properties": {"code": prop}}


def test_an_exponential_pattern_runs_in_linear_time():
    """Issue 22: `^(a+)+$` with a default of 40 a's and a b froze the server per view."""
    import time

    start = time.process_time()
    check = schema_check(_pattern_schema("^(a+)+$", "a" * 5000 + "b"))
    assert check.problems and check.problems[0].code == "schema_value"  # default doesn't fit
    spec = schema_check(_pattern_schema("^(a+)+$")).fields[0]
    assert validate_value(spec, "a" * 9999 + "!")[0].code == "pattern_mismatch"
    assert validate_value(spec, "aaa") == []
    assert time.process_time() - start < 0.5


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)a", r"(?<!x)y", "(a{999}){999}"])
def test_patterns_re2_cant_run_refuse_the_schema(pattern):
    check = schema_check(_pattern_schema(pattern))
    assert [p.code for p in check.problems] == ["schema_value"]
    assert "RE2" in check.problems[0].reason


def test_stored_fields_are_read_without_running_a_pattern(monkeypatch):
    from questionnaires.protocol import elicitation_schema

    schema = _pattern_schema("^[0-9]+$", "12")
    assert schema_check(schema).ok
    monkeypatch.setattr(elicitation_schema, "pattern_matches", _no_call)
    monkeypatch.setattr(elicitation_schema, "pattern_problem", _no_call)
    (field,) = schema_fields(schema)
    assert field.pattern == "^[0-9]+$" and field.default == "12"


def _no_call(*args):
    raise AssertionError("a pattern ran")
