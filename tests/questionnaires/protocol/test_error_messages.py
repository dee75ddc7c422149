"""The localized error-message table (``error_messages.py``) against the README's code tables."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from questionnaires.protocol import error_messages
from questionnaires.protocol.error_messages import CATALOG, make_error

README = Path(error_messages.__file__).with_name("README.md")
_CODE_RE = re.compile(r"`((?:questionnaire|response|answer|selfcheck)\.[a-z_.]+)`")
_SUFFIX_RE = re.compile(r"^\| `([a-z_]+)` \|", re.MULTILINE)


def _documented_codes() -> set[str]:
    """Every full code in the README's error-code tables, with the ``questionnaire_async``
    suffixes expanded to both of their prefixes."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Error codes", 1)[1].split("\n## ", 1)[0]
    codes = {c for c in _CODE_RE.findall(section) if not c.endswith(".")}
    start = section.split("### `questionnaire_async`", 1)[1].split("\n### ", 1)[0]
    for suffix in _SUFFIX_RE.findall(start):
        codes.add(f"questionnaire.start.{suffix}")
        codes.add(f"questionnaire.json.{suffix}")
    return codes


def test_the_module_is_named_error_messages() -> None:
    # ``messages`` clashed with the Message model's name elsewhere in the project.
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("questionnaires.protocol.messages")


def test_every_documented_code_has_both_messages() -> None:
    missing = sorted(_documented_codes() - set(CATALOG))
    assert missing == []
    for code, (english, chinese) in CATALOG.items():
        assert english.strip() and chinese.strip(), code


def test_every_catalog_code_is_documented() -> None:
    assert sorted(set(CATALOG) - _documented_codes()) == []


def test_make_error_localizes_and_keeps_details() -> None:
    english = make_error("questionnaire.start.questions_empty", "questions", "en")
    chinese = make_error("questionnaire.start.questions_empty", "questions", "zh-hans")
    assert english.message == "`questions` must not be empty."
    assert chinese.message == "`questions` 不能为空数组。"
    error = make_error("questionnaire.json.too_large", "", "en", size=9, limit=8)
    assert error.details == {"size": 9, "limit": 8}
    assert "9" in error.message and "8" in error.message
