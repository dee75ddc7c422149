from __future__ import annotations

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_models_and_migrations_agree():
    out = io.StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_structured_answers_survive_the_move_to_the_asks_kind():
    """A database filled under the old layout (StructuredAnswer in the chat app) keeps
    every row when migrated to the new one (the model lives in questionnaires.asks)."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    old = [("chat", "0002_agent_labels"), ("questionnaires", "0001_initial")]
    new = [("chat", "0003_structuredanswer_to_questionnaires")]
    executor = MigrationExecutor(connection)
    executor.migrate(old)
    apps = executor.loader.project_state(old).apps
    user = apps.get_model("auth", "User").objects.create(username="old-layout")
    conversation = apps.get_model("chat", "Conversation").objects.create(owner=user)
    old_answer = apps.get_model("chat", "StructuredAnswer")
    for n in range(3):
        old_answer.objects.create(
            conversation=conversation, turn_id="t1", field=f"f{n}", value=n, source="user_edit"
        )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(new)
    apps = executor.loader.project_state(new).apps
    moved = apps.get_model("questionnaires", "StructuredAnswer")
    assert sorted(moved.objects.values_list("field", "value")) == [("f0", 0), ("f1", 1), ("f2", 2)]
    assert moved._meta.db_table == "questionnaires_structuredanswer"
    executor = MigrationExecutor(connection)  # back to the latest state for other tests
    executor.migrate(executor.loader.graph.leaf_nodes())
