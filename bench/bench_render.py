"""Page rendering benchmarks (issue 4), on a throwaway SQLite database.

- `page_render_ms_per_message`: server time to build and render the conversation page
  for 1,000 messages (20 % carrying a questionnaire), warm cache, divided by 1,000.
- `page_render_ratio`: that time against rendering the same messages as plain escaped
  text in the same template (same queries for the messages, no segmenting, no cards).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

MESSAGES = 1000
RUNS = 9
TRIP = """Let me ask a few things first.

```questionnaire
title: Trip plan {n}
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
    default:
      - Train
  - type: free_text
    text: Anything else?
    default: ""
```
"""
PROSE = (
    "Message {n}: some **Markdown** with a [link](https://example.com) and `code`.\n\n- a\n- b\n"
)


def _setup(db: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chat.settings")
    os.environ.setdefault("AGENT_RUNNER", "inline")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _conversation() -> Any:
    from django.contrib.auth.models import User

    from chat.core.models import Conversation, Message

    user = User.objects.create_user("bench")
    conversation = Conversation.objects.create(owner=user, title="bench", agent="external")
    rows = []
    for n in range(1, MESSAGES + 1):
        role = "user" if n % 2 else "assistant"
        content = TRIP.format(n=n) if n % 5 == 0 else PROSE.format(n=n)
        rows.append(Message(conversation=conversation, seq=n, role=role, content=content))
    Message.objects.bulk_create(rows)
    return conversation


def _time(func: Any) -> float:
    func()  # warm: fills the rendered-message cache, template caches, connections
    func()
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def run() -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        _setup(Path(tmp) / "bench.sqlite3")
        from django.shortcuts import render
        from django.test import RequestFactory
        from django.utils.html import escape
        from django.utils.safestring import mark_safe

        from chat.edge import page as presenters
        from chat.edge.forms import MessageForm
        from chat.edge.page import MessageItem, conversation_page

        conversation = _conversation()
        request = RequestFactory().get(f"/conversations/{conversation.pk}/")
        request.user = conversation.owner

        def page() -> None:
            context = conversation_page(conversation=conversation, form=MessageForm())
            assert len(context["items"]) == MESSAGES
            render(request, "chat/conversation.html", context)

        def plain_items(_conversation: Any, messages: list[Any], **_kw: Any) -> list[Any]:
            return [MessageItem(m, mark_safe(escape(m.content))) for m in messages]  # noqa: S308

        full = _time(page)
        # The same page, context and template, with each message body as escaped text.
        real_items = presenters._items
        presenters._items = plain_items
        try:
            baseline = _time(page)
        finally:
            presenters._items = real_items
    return {
        "page_render_ms_per_message": {
            "value": round(full / MESSAGES, 4),
            "unit": "ms",
            "target": 0.5,
        },
        "page_render_ratio": {
            "value": round(full / baseline, 3),
            "unit": "x",
            "target": 1.5,
        },
    }


if __name__ == "__main__":
    for name, result in run().items():
        print(f"{name}: {result['value']} {result['unit']} (target {result['target']})")
