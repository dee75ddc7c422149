from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from chat.core.demo import demo_user_ensure


class Command(BaseCommand):
    help = "Create (or reset) the demo login used by `make run`, and print it."

    def handle(self, *args: str, **options: Any) -> None:
        demo = demo_user_ensure()
        self.stdout.write(
            f"Demo login: username '{demo.username}', "
            f"password '{demo.password}' (also admin at /admin/)"
        )
