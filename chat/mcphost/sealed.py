"""MCP server credentials encrypted at rest: a database copy alone reveals none of them.

Header values and bearer tokens are stored as Fernet tokens (`cryptography`: AES-128-CBC
+ HMAC-SHA256) by two model fields, `SealedTextField` and `SealedJSONField`; Python code
sees plain values. The keys are not in the database:

- `MCP_SECRETS_KEY` (environment): one or more Fernet keys, comma-separated; or else
- `MCP_SECRETS_KEY_FILE` (default `.mcp_secrets_key` beside manage.py, mode 0600,
  git-ignored): one key a line, made at random on first use — kept like `.secret_key`.

The first key encrypts, every key decrypts (`MultiFernet`), so a key is rotated by putting
a new one first, re-encrypting every row and dropping the old one:
`manage.py mcp_secrets_rotate` does all three with the key file. A process that meets a
value it can't decrypt reads the key file again (another process rotated it) before it
gives up with `SealedValueError`.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.db import models


class SealedValueError(ValueError):
    """A stored secret the configured keys can't decrypt (a wrong or dropped key)."""


def key_file() -> Path:
    return Path(settings.MCP_SECRETS_KEY_FILE)


def _file_keys(path: Path) -> tuple[str, ...]:
    """The key file's keys; the file is made (O_EXCL: one process wins) when missing."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as handle:
            handle.write(Fernet.generate_key().decode() + "\n")
    keys = tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return tuple(key for key in keys if key)


def configured_keys() -> tuple[str, ...]:
    """The keys in force, the encrypting one first."""
    explicit = [k.strip() for k in settings.MCP_SECRETS_KEY.split(",") if k.strip()]
    return tuple(explicit) or _file_keys(key_file())


@functools.lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    if not keys:
        raise SealedValueError("no MCP secrets key: set MCP_SECRETS_KEY or its key file")
    return MultiFernet([Fernet(key.encode()) for key in keys])


_keys: tuple[str, ...] | None = None


def fernet(*, reload: bool = False) -> MultiFernet:
    global _keys
    if _keys is None or reload:
        _keys = configured_keys()
    return _fernet(_keys)


def seal(text: str) -> str:
    return fernet().encrypt(text.encode("utf-8")).decode("ascii")


def unseal(token: str) -> str:
    try:
        return fernet().decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError):
        pass
    try:  # the key file may have been rotated by another process since
        return fernet(reload=True).decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError):
        raise SealedValueError(
            "an MCP server secret can't be decrypted with MCP_SECRETS_KEY / its key file"
        ) from None


class SealedTextField(models.TextField):  # type: ignore[type-arg]
    """Text stored encrypted; read and written as plain text."""

    _pyi_private_set_type: str
    _pyi_private_get_type: str

    def from_db_value(self, value: str | None, expression: object, connection: object) -> object:
        return None if value is None else unseal(value)

    def get_prep_value(self, value: object) -> object:
        return None if value is None else seal(str(value))


class SealedJSONField(models.Field):  # type: ignore[type-arg]
    """A JSON object of strings (header name → value) stored encrypted; read and
    written as the dict."""

    _pyi_private_set_type: dict[str, str]
    _pyi_private_get_type: dict[str, str]

    def from_db_value(self, value: str | None, expression: object, connection: object) -> object:
        return None if value is None else json.loads(unseal(value))

    def get_internal_type(self) -> str:
        return "TextField"  # the column holds the token

    def to_python(self, value: object) -> object:
        return value

    def get_prep_value(self, value: object) -> object:
        return None if value is None else seal(json.dumps(value, ensure_ascii=False))

    def value_to_string(self, obj: models.Model) -> str:
        return json.dumps(self.value_from_object(obj))
