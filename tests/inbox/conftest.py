from __future__ import annotations

import pytest

YESNO = {"question": "Is the knee swollen?", "field": "swelling", "type": "boolean"}
PAIN = {
    "question": "How bad is the pain?",
    "field": "pain",
    "options": [{"label": "None", "value": "none"}, {"label": "Mild", "value": "mild"}],
}
ONE_CHOICE = """Quick one.

```questionnaire
title: Lunch
questions:
  - type: single_choice
    text: Soup or salad?
    options:
      - Soup
      - Salad
    default: Soup
```
"""


@pytest.fixture
def external(user):
    from chat.core.services import conversation_create

    return conversation_create(owner=user, title="Knee check", agent="external")


@pytest.fixture
def second(user):
    from chat.core.services import conversation_create

    return conversation_create(owner=user, title="Lunch plans", agent="external")


@pytest.fixture
def ask(external):
    """Ask `payload` in `conversation` (default: the knee check): the ask's message."""
    from questionnaires.asks.services import ask_create

    def make(payload=PAIN, conversation=None, turn_id="turn_1"):
        return ask_create(conversation=conversation or external, payload=payload, turn_id=turn_id)

    return make


@pytest.fixture
def inline_card(second):
    """An assistant message with a one-question inline card, and its open wait."""
    from chat.core.models import Role
    from chat.core.services import message_create
    from chat.core.waits import wait_open

    message = message_create(conversation=second, role=Role.ASSISTANT, content=ONE_CHOICE)
    wait_open(conversation=second, kind="inline", ref=f"inline:{message.pk}", seconds=600)
    return message
