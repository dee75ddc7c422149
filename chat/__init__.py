"""The chat app and the Django project around it."""

from __future__ import annotations

# The Celery app is created with Django, so tasks sent from web processes use its broker.
from chat.celery import app as celery_app

__all__ = ["celery_app"]
