from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create (or reset) the demo login used by `make run`, and print it."

    def handle(self, *args: str, **options: Any) -> None:
        User = get_user_model()
        user, _created = User.objects.get_or_create(username=settings.DEMO_USERNAME)
        user.set_password(settings.DEMO_PASSWORD)
        user.is_staff = True
        user.is_superuser = True
        user.save()
        self.stdout.write(
            f"Demo login: username '{settings.DEMO_USERNAME}', "
            f"password '{settings.DEMO_PASSWORD}' (also admin at /admin/)"
        )
