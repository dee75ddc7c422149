from __future__ import annotations

import pytest

from tests.support.analytics import trip_cards


@pytest.fixture
def trips(user):
    """Five trip cards: answered in 10 s and 30 s, abandoned, expired, open."""
    return trip_cards(user)
