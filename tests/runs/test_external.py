"""External runtimes' runs: an API call cancels one, an idle one ends, and the page stops
saying the assistant is working (issue 21 §5)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from chat.core.models import Event, Run
from chat.core.services import conversation_create
from chat.runs.external import runs_external_idle
from chat.runs.waits import waits_expire

pytestmark = pytest.mark.django_db


@pytest.fixture
def opened(api, user):
    conversation = conversation_create(owner=user, agent="external")
    body = api.post(f"/api/v1/conversations/{conversation.pk}/runs").json()
    return conversation, Run.objects.get(pk=body["run_id"])


def finished_events(conversation):
    return [e.data for e in Event.objects.filter(conversation=conversation, name="run_finished")]


def test_an_api_call_cancels_an_external_run(api, opened, client_in):
    conversation, run = opened
    page = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
    assert "The assistant is working" in page
    response = api.post(f"/api/v1/conversations/{conversation.pk}/runs/{run.pk}/cancel")
    assert response.status_code == 200
    assert response.json() == {"run_id": run.pk, "status": "cancelled", "stop_reason": "cancelled"}
    assert finished_events(conversation) == [
        {"run_id": run.pk, "stop_reason": "cancelled", "status": "cancelled"}
    ]
    page = client_in.get(reverse("chat:conversation", args=[conversation.pk])).content.decode()
    assert "The assistant is working" not in page
    again = api.post(f"/api/v1/conversations/{conversation.pk}/runs/{run.pk}/cancel")
    assert again.status_code == 409 and again.json()["error"] == "run_not_active"


def test_another_users_run_is_a_404(api, django_user_model):
    other = django_user_model.objects.create_user("someone-else")
    conversation = conversation_create(owner=other, agent="external")
    run = Run.objects.create(conversation=conversation, status="running", worker="external")
    response = api.post(f"/api/v1/conversations/{conversation.pk}/runs/{run.pk}/cancel")
    assert response.status_code == 404
    assert Run.objects.get(pk=run.pk).status == "running"


def test_an_idle_external_run_ends(opened, settings):
    conversation, run = opened
    settings.EXTERNAL_RUN_IDLE_MINUTES = 10
    assert runs_external_idle() == []
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=11))
    waits_expire()  # the reaper's sweep
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("finished", "idle")
    assert finished_events(conversation)[0]["stop_reason"] == "idle"
