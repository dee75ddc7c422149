"""The elicitation card's view model."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import translation

from questionnaires.elicitations.presenter import ElicitationCard


def _answered(answers):
    return ElicitationCard(
        id=1,
        conversation_id=1,
        message_id=1,
        server_name="demo",
        tool_name="reserve_table",
        mode="form",
        prompt="Reserve a table",
        status="accepted",
        expires_at=datetime(2030, 1, 1, tzinfo=UTC),
        answers=answers,
    )


def test_the_folded_summary_labels_every_value():
    """Issue 32 (design): "Newsletter: No", never a bare "No" nobody can place."""
    card = _answered((("Party size", "3"), ("Dietary", ""), ("Newsletter", "No")))
    assert card.chrome.summary == "Party size: 3 · Newsletter: No"
    with translation.override("zh-hans"):
        assert _answered((("人数", "3"),)).chrome.summary == "人数：3"
