"""The message catalogs (one per language) against each other and the README's codes."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from questionnaires.protocol import catalogs
from questionnaires.protocol.catalogs import CATALOGS, entry, template, text

README = Path(catalogs.__file__).parent.parent / "README.md"
_CODE_RE = re.compile(r"`((?:questionnaire|response|answer|selfcheck|ask|reference)\.[a-z_.]+)`")
_SUFFIX_RE = re.compile(r"^\| `([a-z_]+)` \|", re.MULTILINE)
DOCUMENTED_FAMILIES = (
    "questionnaire.",
    "response.",
    "answer.",
    "selfcheck.",
    "ask.",
    "reference.",
    "*.",
)


def _documented_codes() -> set[str]:
    """Every full code in the README's error-code tables, with the ``questionnaire_async``
    suffixes expanded to both of their prefixes."""
    text_ = README.read_text(encoding="utf-8")
    section = text_.split("## Error codes", 1)[1].split("\n## ", 1)[0]
    first_cells = [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| `")]
    codes = {c for cell in first_cells for c in _CODE_RE.findall(cell) if not c.endswith(".")}
    start = section.split("### `questionnaire_async`", 1)[1].split("\n### ", 1)[0]
    for suffix in _SUFFIX_RE.findall(start):
        codes.add(f"questionnaire.start.{suffix}")
        codes.add(f"questionnaire.json.{suffix}")
    return codes


def _fields(template_: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template_) if name}


def test_one_catalog_per_language_with_the_same_keys_and_fields() -> None:
    english, chinese = CATALOGS["en"], CATALOGS["zh-hans"]
    assert sorted(english) == sorted(chinese)
    for key, value in english.items():
        assert value.strip() and chinese[key].strip(), key
        assert _fields(value) == _fields(chinese[key]), key


def test_every_documented_code_has_a_message() -> None:
    missing = sorted(code for code in _documented_codes() if entry(code) is None)
    assert missing == []


def test_every_error_entry_serves_a_documented_code() -> None:
    served = {entry(code) for code in _documented_codes()}
    keys = {k for k in CATALOGS["en"] if k.startswith(DOCUMENTED_FAMILIES)}
    assert sorted(keys - served) == []


@pytest.mark.parametrize(
    ("code", "key"),
    [
        ("questionnaire.title.required", "questionnaire.title.required"),
        ("questionnaire.tag.mismatch", "*.tag.mismatch"),
        ("response.tag.mismatch", "*.tag.mismatch"),
        ("questionnaire.json.syntax", "*.json.syntax"),
        ("questionnaire.json.questions_empty", "questionnaire.*.questions_empty"),
        ("questionnaire.start.note.id_converted", "questionnaire.*.note.id_converted"),
        ("questionnaire.nothing", None),
    ],
)
def test_a_code_finds_its_entry(code: str, key: str | None) -> None:
    assert entry(code) == key


def test_languages_and_fill() -> None:
    assert template("text.other", "zh-CN") == "其他"
    assert template("text.other", "fr") == "Other"
    assert text("text.started", "en", count="3").endswith("(3 questions).")
    assert text("text.started", "en").endswith("(? questions).")  # a missing field shows ?
    assert text("no.such.key", "en") == "no.such.key"
