"""Fixture-driven segmenter cases: ``cases/*.yaml`` (input message → expected segments)."""

from __future__ import annotations

from typing import Any

import pytest

from questionnaires.protocol import parse_message

from .conftest import CASES_DIR, expand, load_cases

SEGMENT_FILES = sorted(p.name for p in CASES_DIR.glob("segments_*.yaml"))
CASES = [
    pytest.param(case, id=f"{filename[9:-5]}:{case['name']}")
    for filename in SEGMENT_FILES
    for case in load_cases(filename)
]


def _check_block(segment: Any, expected: dict[str, Any]) -> None:
    data = segment.to_dict()
    assert data["kind"] == expected["kind"]
    for key in ("name", "encoding", "title"):
        if key in expected:
            assert data[key] == expected[key], key
    if "id" in expected:
        assert segment.questionnaire_id == expected["id"]
    if "codes" in expected:
        assert [e["code"] for e in data["errors"]] == expected["codes"]
    if "paths" in expected:
        assert [e["path"] for e in data["errors"]] == expected["paths"]
    if "details" in expected:
        for error, details in zip(data["errors"], expected["details"], strict=True):
            for key, value in details.items():
                assert error["details"][key] == value, key
    if "raw" in expected:
        assert segment.raw == expand(expected["raw"])
    if "questions" in expected:
        actual = data["questions"]
        assert len(actual) == len(expected["questions"])
        for got, want in zip(actual, expected["questions"], strict=True):
            for key, value in want.items():
                assert got[key] == value, key
    if "payload" in expected:
        for key, value in expected["payload"].items():
            assert data["payload"][key] == value, key


@pytest.mark.parametrize("case", CASES)
def test_segment_case(case: dict[str, Any]) -> None:
    content = expand(case["input"])
    for lang in ("en", "zh-hans"):
        segments = parse_message(
            content,
            message_id=case.get("message_id", "m"),
            role=case.get("role", "assistant"),
            lang=lang,
        )
        assert "".join(s.raw for s in segments) == content
        assert [s.kind for s in segments] == case["kinds"]
        for segment in segments:
            assert content[segment.start : segment.end] == segment.raw
        protocol = [s for s in segments if s.kind != "markdown"]
        for segment, expected in zip(protocol, case.get("blocks", []), strict=False):
            _check_block(segment, expected)
        if "blocks" in case:
            assert len(case["blocks"]) == len(protocol)


def test_enough_cases() -> None:
    assert len(CASES) >= 150
