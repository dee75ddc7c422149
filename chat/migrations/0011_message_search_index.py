"""The sidebar's search over message text (chat.core.selectors.conversation_search_for_user):
on PostgreSQL a GIN index on the very expression the search uses; other databases search
by substring and get nothing here."""

from django.db import migrations

INDEX = "msg_content_fts_simple"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON chat_message "
            "USING gin (to_tsvector('simple'::regconfig, COALESCE(content, '')))"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("chat", "0010_user_preferences")]

    operations = [migrations.RunPython(create, drop, elidable=False)]
