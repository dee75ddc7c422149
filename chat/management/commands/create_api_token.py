from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chat.core.services import api_token_create


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (shown once; only its hash is kept)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="A label for the token.")

    def handle(self, *args: str, **options: Any) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(username=options["username"])
        except User.DoesNotExist:
            raise CommandError(f"No user named {options['username']!r}.", returncode=2) from None
        _token, raw = api_token_create(user=user, name=options["name"])
        self.stdout.write(raw)
