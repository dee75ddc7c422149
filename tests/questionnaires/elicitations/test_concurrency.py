"""Twenty concurrent submits for one elicitation card record exactly one answer.

Real concurrency needs a real database server: runs against PostgreSQL when DATABASE_URL
points at it, and is skipped (or fails under REQUIRE_SERVICES=1) otherwise.
"""

from __future__ import annotations

from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse

from questionnaires.models import Elicitation
from tests.support.asking import open_elicitation
from tests.support.concurrency import at_once

pytestmark = [pytest.mark.postgres]
THREADS = 20


def test_twenty_concurrent_submits_record_one_answer(
    postgres_only, transactional_db, user, conversation
):
    row = open_elicitation(conversation)
    url = reverse("chat:elicitation_answer", args=[conversation.pk, row.pk])

    def post(n: int, client: Client) -> object:
        body = {"action": "accept", "answer-name": f"n{n}", "answer-age": str(n)}
        return client.post(url, body, headers={"HX-Request": "true"})

    responses = at_once(user, THREADS, post)
    assert Counter(r.status_code for r in responses) == {200: 1, 409: THREADS - 1}
    for response in responses:
        if response.status_code == 409:
            assert "already answered" in response.content.decode()
    stored = Elicitation.objects.get()
    assert stored.status == "accepted" and stored.content["name"] == f"n{stored.content['age']}"
