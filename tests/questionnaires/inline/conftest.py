from __future__ import annotations

import json

import pytest

TRIP = """Please answer a few questions.

```questionnaire
title: Trip plan
questions:
  - type: single_choice
    text: Where to?
    options:
      - Paris
      - Rome
    default: Paris
    allow_other: true
  - type: multi_choice
    text: Transport?
    options:
      - Train
      - Plane
      - Car
    default:
      - Train
  - type: free_text
    text: Anything else?
    default: ""
```

Thanks!
"""

ASYNC_ARGS = {
    "title": "Async trip",
    "questions": [
        {"id": "dest", "type": "single_choice", "text": "Where?", "options": ["Oslo", "Bergen"]},
    ],
}


@pytest.fixture
def card_message(conversation):
    """An assistant message with one inline questionnaire (the latest message)."""
    from chat.core.services import message_create

    message_create(conversation=conversation, role="user", content="Plan my trip")
    return message_create(conversation=conversation, role="assistant", content=TRIP)


def post_async_card(conversation, *, call_id: str = "call_trip", arguments=None):
    """A questionnaire_async tool call plus its tool result, as an agent runtime posts them."""
    from chat.core.services import message_create
    from questionnaires.protocol import questionnaire_async

    args = ASYNC_ARGS if arguments is None else arguments
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "questionnaire_async", "arguments": json.dumps(args)},
    }
    card = message_create(conversation=conversation, role="assistant", tool_calls=[call])
    result = questionnaire_async(args, lang="en")
    message_create(
        conversation=conversation, role="tool", tool_call_id=call_id, content=json.dumps(result)
    )
    return card
