from __future__ import annotations

import pytest

from tests.support.asking import ASYNC_ARGS, TRIP, post_async_card  # noqa: F401 (shared)


@pytest.fixture
def card_message(conversation):
    """An assistant message with one inline questionnaire (the latest message)."""
    from chat.core.services import message_create

    message_create(conversation=conversation, role="user", content="Plan my trip")
    return message_create(conversation=conversation, role="assistant", content=TRIP)
