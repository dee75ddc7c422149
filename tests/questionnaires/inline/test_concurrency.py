"""Twenty concurrent submits for one card create exactly one user message.

Real concurrency needs a real database server: this runs against PostgreSQL when
DATABASE_URL points at it, and is skipped (or fails under REQUIRE_SERVICES=1) otherwise.
"""

from __future__ import annotations

from collections import Counter

import pytest
from django.test import Client
from django.urls import reverse

from chat.core.models import Message
from questionnaires.models import Submission
from tests.support.concurrency import at_once

pytestmark = [pytest.mark.postgres]
THREADS = 20


def test_twenty_concurrent_submits_create_one_answer(
    postgres_only, transactional_db, user, card_message
):
    url = reverse("chat:questionnaire_submit", args=[card_message.conversation_id, card_message.pk])
    body = {
        "questionnaire_id": f"{card_message.pk}_q1",
        "answers": {"q1": "Rome", "q2": [], "q3": ""},
    }
    responses = at_once(
        user, THREADS, lambda n, client: client.post(url, body, content_type="application/json")
    )
    assert Counter(r.status_code for r in responses) == {201: 1, 409: THREADS - 1}
    for response in responses:
        if response.status_code != 201:
            assert response.json()["error"] == "questionnaire_already_submitted"
    answers = Message.objects.filter(
        conversation_id=card_message.conversation_id,
        role="user",
        content__startswith="<questionnaire-response>",
    )
    assert answers.count() == 1
    assert Submission.objects.count() == 1


def test_ten_concurrent_changes_of_one_version_make_one_change(
    postgres_only, transactional_db, user, card_message
):
    """Issue 27: "Change answer" is exactly once per version, like a first answer."""
    url = reverse("chat:questionnaire_submit", args=[card_message.conversation_id, card_message.pk])
    qid = f"{card_message.pk}_q1"
    first = Client()
    first.force_login(user)
    body = {"questionnaire_id": qid, "answers": {"q1": "Rome", "q2": [], "q3": ""}}
    assert first.post(url, body, content_type="application/json").status_code == 201
    threads_n = 10

    def change(n: int, client: Client) -> object:
        answers = {"q1": "Paris", "q2": [], "q3": str(n)}
        return client.post(
            url, {**body, "version": 1, "answers": answers}, content_type="application/json"
        )

    responses = at_once(user, threads_n, change)
    assert Counter(r.status_code for r in responses) == {201: 1, 409: threads_n - 1}
    for response in responses:
        if response.status_code != 201:
            assert response.json()["error"] == "questionnaire_version_stale"
    assert sorted(Submission.objects.values_list("version", flat=True)) == [1, 2]
