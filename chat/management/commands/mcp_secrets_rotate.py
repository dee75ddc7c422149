"""`mcp_secrets_rotate`: encrypt every MCP server's secrets with a new key.

With the key file (no `MCP_SECRETS_KEY`): a new key is put first in the file, every row is
encrypted again with it, then the old keys are dropped (`--keep-old` keeps them). Running
processes read the file again when they meet a value their keys can't decrypt.

With `MCP_SECRETS_KEY` in the environment the command can't change the keys itself:
`--new-key` prints a fresh key; put it first (`MCP_SECRETS_KEY=new,old`), restart, run
this command to encrypt every row with it, then remove the old key and restart again.
"""

from __future__ import annotations

from cryptography.fernet import Fernet
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from chat.mcphost import sealed
from chat.mcphost.models import McpServer


class Command(BaseCommand):
    help = "Encrypt every MCP server's header values and bearer token with a new key."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--new-key", action="store_true", help="Print a new key and stop.")
        parser.add_argument(
            "--keep-old", action="store_true", help="Keep the old keys in the key file."
        )

    def handle(self, *args: str, **options: object) -> None:
        if options["new_key"]:
            self.stdout.write(Fernet.generate_key().decode())
            return
        from_env = bool(settings.MCP_SECRETS_KEY.strip())
        old = sealed.configured_keys()
        if not from_env:
            self._write([Fernet.generate_key().decode(), *old])
        try:
            count = self._reencrypt()
        except sealed.SealedValueError as exc:
            if not from_env:
                self._write(list(old))  # nothing was changed: back to the keys before
            raise CommandError(str(exc), returncode=1) from exc
        if not from_env and not options["keep_old"]:
            self._write([sealed.configured_keys()[0]])
        where = "MCP_SECRETS_KEY's first key" if from_env else f"a new key in {sealed.key_file()}"
        self.stdout.write(f"{count} MCP server(s) encrypted with {where}.")

    def _write(self, keys: list[str]) -> None:
        path = sealed.key_file()
        temporary = path.with_name(path.name + ".new")
        temporary.write_text("".join(f"{key}\n" for key in keys), encoding="utf-8")
        temporary.chmod(0o600)
        temporary.replace(path)
        sealed.fernet(reload=True)

    def _reencrypt(self) -> int:
        """Read every row with any key in force, write it with the first one."""
        with transaction.atomic():
            servers = list(McpServer.objects.select_for_update())
            for server in servers:
                server.save(update_fields=["headers", "bearer_token"])
        return len(servers)
