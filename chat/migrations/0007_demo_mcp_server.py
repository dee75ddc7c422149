"""The bundled demo MCP server (chat/mcphost/demo.py), registered so a new install shows
an elicitation without configuration: the Protocol tour calls `demo__reserve_table`.

Only for the offline scripted agent; admins may disable or delete it, or add "openai" to
its agents. Reversing removes it only if it still points at the built-in server.
"""

from __future__ import annotations

from django.db import migrations

DEMO = {"name": "demo", "url": "builtin:demo"}


def add_demo(apps, schema_editor):
    McpServer = apps.get_model("chat", "McpServer")
    McpServer.objects.get_or_create(
        name=DEMO["name"], defaults={"url": DEMO["url"], "enabled": True, "agents": ["scripted"]}
    )


def remove_demo(apps, schema_editor):
    apps.get_model("chat", "McpServer").objects.filter(**DEMO).delete()


class Migration(migrations.Migration):
    dependencies = [("chat", "0006_mcpserver")]

    operations = [migrations.RunPython(add_demo, remove_demo)]
