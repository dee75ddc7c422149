from __future__ import annotations

import pytest

from tests.support.asking import SPEC_PAYLOAD


@pytest.fixture
def external(user):
    """A conversation without a built-in agent: asks come from the test, no runs."""
    from chat.core.services import conversation_create

    return conversation_create(owner=user, title="Asks", agent="external")


@pytest.fixture
def make_ask(external):
    from questionnaires.asks.services import ask_create

    def make(payload=None, turn_id="turn_1", conversation=None):
        return ask_create(
            conversation=conversation or external, payload=payload or SPEC_PAYLOAD, turn_id=turn_id
        )

    return make
