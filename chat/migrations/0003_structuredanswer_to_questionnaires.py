"""StructuredAnswer moved to the asks kind (questionnaires.asks): the chat app forgets it.

State only: the table was renamed and adopted by questionnaires 0002, which runs first.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0002_agent_labels"),
        ("questionnaires", "0002_structuredanswer_from_chat"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="StructuredAnswer")],
        ),
    ]
