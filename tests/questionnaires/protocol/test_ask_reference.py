"""`knowledge_reference` payloads (spec 004 "知识库引用"): validation and normalization."""

from __future__ import annotations

import pytest

from questionnaires.protocol.ask_reference import (
    ReferenceInvalid,
    reference_or_none,
    reference_validate,
)
from tests.support.asking import REFERENCE as GOOD


def _codes(raw):
    with pytest.raises(ReferenceInvalid) as info:
        reference_validate(raw)
    return {(e.code, e.path) for e in info.value.errors}


def test_valid_reference_is_normalized():
    assert reference_validate(GOOD) == GOOD
    minimal = reference_validate({"title": " T ", "snippet": " S "})
    assert minimal == {"title": "T", "snippet": "S", "source": "", "url": ""}
    assert reference_validate(minimal) == minimal  # re-validating is a no-op


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("just text", ("reference.not_object", "reference")),
        ({"snippet": "s"}, ("reference.title_required", "reference.title")),
        ({"title": "t", "snippet": ""}, ("reference.snippet_required", "reference.snippet")),
        ({"title": "t", "snippet": 5}, ("reference.text_invalid", "reference.snippet")),
        ({"title": "t" * 201, "snippet": "s"}, ("reference.text_invalid", "reference.title")),
        ({"title": "t", "snippet": "s", "url": "javascript:alert(1)"}, ("reference.url_invalid", "reference.url")),
        ({"title": "t", "snippet": "s", "url": "ftp://example.org/x"}, ("reference.url_invalid", "reference.url")),
        ({"title": "t", "snippet": "s", "url": "https://"}, ("reference.url_invalid", "reference.url")),
        ({"title": "t", "snippet": "s", "url": "https://a.org/x y"}, ("reference.url_invalid", "reference.url")),
        ({"title": "t", "snippet": "s", "link": "x"}, ("reference.unknown_keys", "reference")),
    ],
)  # fmt: skip
def test_invalid_reference_codes(raw, expected):
    assert expected in _codes(raw)


def test_every_problem_reported_at_once():
    codes = _codes({"title": "", "snippet": "", "url": "data:text/html,x"})
    assert {c for c, _ in codes} == {
        "reference.title_required",
        "reference.snippet_required",
        "reference.url_invalid",
    }


def test_reference_or_none_never_raises():
    assert reference_or_none(None) is None
    assert reference_or_none({"title": "t"}) is None
    assert reference_or_none(GOOD) == GOOD


def test_messages_are_localized_without_django():
    with pytest.raises(ReferenceInvalid) as info:
        reference_validate({"title": "t"}, lang="zh-hans")
    (error,) = info.value.errors
    assert error.message == "请为知识库引用提供 `snippet`。"
    with pytest.raises(ReferenceInvalid) as info:
        reference_validate({"title": "t", "snippet": "s" * 1001})
    assert info.value.errors[0].message == (
        '"snippet" must be a non-empty string of at most 1000 characters.'
    )
