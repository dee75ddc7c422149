"""MCP server header values and bearer tokens are encrypted at rest (issue 22).

New encrypted columns are added, every row's secrets are copied into them (encrypted with
the key in force, see chat/mcphost/sealed.py), the plain-text columns are dropped and the
new ones take their names. Reversible: going back decrypts into plain columns again.
"""

from django.db import migrations, models

import chat.mcphost.sealed


def seal_rows(apps, schema_editor):
    McpServer = apps.get_model("chat", "McpServer")
    for server in McpServer.objects.all():
        server.headers_sealed = server.headers or {}
        server.bearer_sealed = server.bearer_token or ""
        server.save(update_fields=["headers_sealed", "bearer_sealed"])


def unseal_rows(apps, schema_editor):
    McpServer = apps.get_model("chat", "McpServer")
    for server in McpServer.objects.all():
        server.headers = server.headers_sealed or {}
        server.bearer_token = server.bearer_sealed or ""
        server.save(update_fields=["headers", "bearer_token"])


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0007_demo_mcp_server"),
    ]

    operations = [
        migrations.AddField(
            model_name="mcpserver",
            name="headers_sealed",
            field=chat.mcphost.sealed.SealedJSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="mcpserver",
            name="bearer_sealed",
            field=chat.mcphost.sealed.SealedTextField(blank=True, default=""),
        ),
        migrations.RunPython(seal_rows, unseal_rows),
        migrations.RemoveField(model_name="mcpserver", name="headers"),
        migrations.RemoveField(model_name="mcpserver", name="bearer_token"),
        migrations.RenameField(
            model_name="mcpserver", old_name="headers_sealed", new_name="headers"
        ),
        migrations.RenameField(
            model_name="mcpserver", old_name="bearer_sealed", new_name="bearer_token"
        ),
        migrations.AlterField(
            model_name="mcpserver",
            name="headers",
            field=chat.mcphost.sealed.SealedJSONField(
                blank=True, default=dict, verbose_name="headers"
            ),
        ),
        migrations.AlterField(
            model_name="mcpserver",
            name="bearer_token",
            field=chat.mcphost.sealed.SealedTextField(
                blank=True, default="", verbose_name="bearer token"
            ),
        ),
    ]
