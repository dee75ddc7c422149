"""Events of one conversation commit in id order (PostgreSQL: real concurrent transactions).

A stream reads `id > cursor`; if a later id could commit before an earlier one, a stream
that had read the later one would skip the earlier one forever.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from chat.core.services import event_emit

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_second_writer_waits_for_the_first_transaction(postgres_only, conversation):
    first_emitted = threading.Event()
    order: list[str] = []

    def slow_transaction() -> None:
        with transaction.atomic():
            event_emit(conversation_id=conversation.pk, name="card_locked", data={})
            first_emitted.set()
            time.sleep(0.5)
            order.append("first commits")
        connection.close()

    def quick_event() -> None:
        first_emitted.wait(5)
        event_emit(conversation_id=conversation.pk, name="text_delta", data={})
        order.append("second commits")
        connection.close()

    threads = [threading.Thread(target=slow_transaction), threading.Thread(target=quick_event)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert order == ["first commits", "second commits"]
    names = list(conversation.events.order_by("id").values_list("name", flat=True))
    assert names == ["card_locked", "text_delta"]
