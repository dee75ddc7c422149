"""ASGI entry point: Django for everything; other ASGI apps (MCP) mount by path prefix."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chat.settings")

application = get_asgi_application()
