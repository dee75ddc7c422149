"""The names of the conversation stream's events: one list in the code, read by the JS.

`event_emit` takes only these (its `name` is an `EventName`, so mypy checks every call
that names one, and it refuses any other at run time); the page renders the tuple for
`static/js/chat.js` (`{% sse_event_names %}`, a `json_script` in `_base.html`), which
follows every one of them to resume a reconnect after the last event it saw.
tests/edge/test_stream_events.py holds the emitters, the tuple and the JS together.
DESIGN §4 (SSE event names); the API's stream sends the same names.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

EventName = Literal[
    "text_delta",
    "message_done",
    "extracted_info",
    "ask_user_options",
    "knowledge_reference",
    "consultation_state_patch",
    "error",
    "run_started",
    "run_finished",
    "run_suspended",
    "run_resumed",
    "tool_call",
    "tool_progress",
    "tool_result",
    "card_locked",
    "messages_superseded",
]

EVENT_NAMES: Final[tuple[EventName, ...]] = get_args(EventName)
