from __future__ import annotations

import pytest


@pytest.fixture
def intake(user):
    """An English knee-consultation intake conversation, started (first asks posted)."""
    from chat.core.services import conversation_create
    from chat.usecases import intake_begin

    conversation = conversation_create(owner=user, title="Knee", agent="intake", language="en")
    intake_begin(conversation=conversation, definition_id="knee")
    conversation.refresh_from_db()
    return conversation
