"""Starting a run: the core writes the queued row, the configured starter starts it
(`settings.RUN_STARTER`, no executor registered at start-up), after the commit."""

from __future__ import annotations

import pytest
from django.db import transaction

from chat.core.models import Run, RunStatus
from chat.core.services import answer_post

pytestmark = pytest.mark.django_db

STARTED: list[dict[str, object]] = []


def record_start(**kw: object) -> None:
    """A starter for these tests: notes what the core asked for, after its commit."""
    transaction.on_commit(lambda: STARTED.append(kw))


@pytest.fixture
def recorded(settings):
    settings.RUN_STARTER = f"{__name__}.record_start"
    STARTED.clear()
    yield STARTED
    STARTED.clear()


def test_an_answer_queues_one_run_and_the_configured_starter_starts_it(
    conversation, recorded, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        message = answer_post(conversation=conversation, content="hello")
    run = Run.objects.get(trigger_message=message)
    assert run.status == RunStatus.QUEUED  # the core only wrote the row
    assert recorded == [{"run_id": run.pk, "again": False}]


def test_nothing_starts_when_the_answer_rolls_back(
    conversation, recorded, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            answer_post(conversation=conversation, content="hello")
            raise RuntimeError("the caller's transaction fails")
        answer_post(conversation=conversation, content="again")
    run = Run.objects.get()  # the second answer's
    assert recorded == [{"run_id": run.pk, "again": False}]


def test_the_project_starter_is_the_runs_package(settings):
    from django.utils.module_loading import import_string

    from chat.runs.dispatch import run_dispatch

    assert import_string(settings.RUN_STARTER) is run_dispatch
