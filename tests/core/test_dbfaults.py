"""A dropped database connection is nobody's error: reads and views run again on a fresh
one, a turn goes to a new attempt (chat/core/dbfaults.py, chat/runs/runner.py)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, OperationalError, connection

from chat.core import dbfaults
from chat.core.models import Message, Role, Run, RunAttempt, RunStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead_connection(monkeypatch):
    """Make every OperationalError look like a dropped connection (as a terminated
    PostgreSQL backend does); the real thing is tested below on PostgreSQL."""
    monkeypatch.setattr(dbfaults, "connection_broken", lambda: True)


def test_a_read_is_done_again_after_the_connection_dropped(dead_connection, monkeypatch):
    monkeypatch.setattr(dbfaults.time, "sleep", lambda s: None)
    calls = []

    def read():
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("server closed the connection unexpectedly")
        return "rows"

    assert dbfaults.retry_on_connection_loss(read) == "rows" and len(calls) == 3


def test_other_database_errors_are_not_retried():
    calls = []

    def fails(error):
        def call():
            calls.append(1)
            raise error

        return call

    with pytest.raises(IntegrityError):
        dbfaults.retry_on_connection_loss(fails(IntegrityError("duplicate key")))
    # An OperationalError on a live connection (a lock timeout, say) is the query's own.
    with pytest.raises(OperationalError):
        dbfaults.retry_on_connection_loss(fails(OperationalError("lock timeout")))
    assert len(calls) == 2


def test_a_view_whose_connection_dropped_runs_once_more(
    client_in, conversation, dead_connection, monkeypatch
):
    from chat import usecases

    original = usecases.message_post_user
    calls = []

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("terminating connection due to administrator command")
        return original(**kwargs)

    monkeypatch.setattr(usecases, "message_post_user", flaky)
    response = client_in.post(f"/conversations/{conversation.pk}/messages", {"content": "hello"})
    assert response.status_code == 302 and len(calls) == 2
    assert Message.objects.filter(conversation=conversation, role=Role.USER).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_view_that_had_committed_is_not_run_again(client, user, dead_connection, monkeypatch):
    """A committed write is never repeated (for a message that would store it twice):
    the error stands."""
    from chat.core.services import conversation_create
    from chat.edge import views

    conversation = conversation_create(owner=user, title="Old", agent="echo")
    calls = []

    def renamed_then_lost(*args, **kwargs):
        calls.append(1)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(views, "redirect", renamed_then_lost)  # after the committed rename
    client.raise_request_exception = False
    client.force_login(user)
    url = f"/conversations/{conversation.pk}/rename"
    response = client.post(url, {"title": "New"})
    assert response.status_code == 500 and len(calls) == 1
    conversation.refresh_from_db()
    assert conversation.title == "New"


def test_a_view_fails_normally_when_the_second_go_fails_too(
    client, user, conversation, dead_connection, monkeypatch
):
    from chat import usecases

    def broken(**kwargs):
        raise OperationalError("the database is gone")

    monkeypatch.setattr(usecases, "message_post_user", broken)
    client.raise_request_exception = False
    client.force_login(user)
    response = client.post(f"/conversations/{conversation.pk}/messages", {"content": "x"})
    assert response.status_code == 500
    assert not Message.objects.filter(conversation=conversation).exists()


def test_a_turn_that_lost_its_connection_goes_to_a_new_attempt(
    conversation, settings, dead_connection, monkeypatch, django_capture_on_commit_callbacks
):
    """Not a failed turn: the run is queued again and the next attempt resumes it."""
    from chat.runs import runner

    settings.AGENT_RUNNER = "celery"
    sent = []
    monkeypatch.setattr("chat.runs.dispatch.run_enqueue", lambda *, run_id: sent.append(run_id))
    monkeypatch.setattr("chat.runs.runner.connection_lost", lambda exc: True)

    def dies(run):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(runner, "_turn_stop", dies)
    run = Run.objects.create(conversation=conversation)
    with django_capture_on_commit_callbacks(execute=True):
        runner.run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.QUEUED, 1)
    assert RunAttempt.objects.get(run=run).outcome == RunAttempt.Outcome.LOST
    assert not conversation.events.filter(name="error").exists()
    assert sent == [run.pk]


def test_a_turn_that_fails_on_a_live_connection_still_fails(conversation, monkeypatch):
    from chat.runs import runner

    def fails(run):
        raise OperationalError("could not serialize access")

    monkeypatch.setattr(runner, "_turn_stop", fails)
    run = Run.objects.create(conversation=conversation)
    runner.run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "could not serialize" in run.error


@pytest.mark.django_db(transaction=True)
def test_a_terminated_postgresql_backend_is_recognised_and_replaced(postgres_only):
    import psycopg

    from chat.core.models import Conversation

    Conversation.objects.count()  # connected
    pid = connection.connection.info.backend_pid
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(OperationalError) as caught:
        Conversation.objects.count()
    assert dbfaults.connection_lost(caught.value)
    dbfaults.connections_reset()
    assert dbfaults.retry_on_connection_loss(Conversation.objects.count) == 0
    assert connection.is_usable()


@pytest.mark.django_db(transaction=True)
def test_a_page_post_survives_a_terminated_postgresql_backend(
    postgres_only, client, user, monkeypatch
):
    """The connection dies inside the message's transaction: nothing was stored, the view
    runs again on a fresh connection, the message is stored once."""
    import psycopg

    from chat.core import services
    from chat.core.services import conversation_create

    conversation = conversation_create(owner=user, title="", agent="echo")
    client.force_login(user)
    original = services.waits_close_answered
    killed = []

    def terminate_then_close(**kwargs):
        if not killed:
            pid = connection.connection.info.backend_pid
            params = connection.get_connection_params()
            params.pop("cursor_factory", None)
            with psycopg.connect(**params, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            killed.append(pid)
        return original(**kwargs)

    monkeypatch.setattr(services, "waits_close_answered", terminate_then_close)
    response = client.post(f"/conversations/{conversation.pk}/messages", {"content": "hello"})
    assert killed and response.status_code == 302
    assert Message.objects.filter(conversation=conversation, role=Role.USER).count() == 1
