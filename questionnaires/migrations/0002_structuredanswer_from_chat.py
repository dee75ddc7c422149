"""StructuredAnswer moves here from the chat app, rows kept.

The model is adopted in state over the existing table, then the table is renamed to this
app's name; chat 0003 then drops the model from the chat app's state only.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('chat', '0002_agent_labels'),
        ('questionnaires', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.CreateModel(
            name='StructuredAnswer',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('turn_id', models.CharField(max_length=100)),
                ('field', models.CharField(max_length=100)),
                ('value', models.JSONField(blank=True, null=True)),
                ('display_text', models.TextField(blank=True)),
                ('raw_text', models.TextField(blank=True)),
                ('source', models.CharField(choices=[('user_option_click', 'Option click'), ('user_free_text', 'Free text'), ('user_skipped', 'Skipped'), ('user_edit', 'Slot edit')], max_length=20)),
                ('confidence', models.FloatField(default=1.0)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('ask_message', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='chat.message')),
                ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='structured_answers', to='chat.conversation')),
                ('user_message', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='chat.message')),
            ],
            options={
                'ordering': ['id'],
                'constraints': [models.UniqueConstraint(condition=models.Q(('ask_message__isnull', False)), fields=('ask_message', 'field'), name='structured_answer_once_per_ask')],
                'db_table': 'chat_structuredanswer',
            },
        )]),
        migrations.AlterModelTable(name='StructuredAnswer', table=None),
    ]
