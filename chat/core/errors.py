"""The project's one exception root: a stable machine code, a human message, a status.

Every layer raises `ChatError` (or a subclass naming where it came from); every edge turns
it into the same JSON `{"error", "message", "details"?}` or a page with the message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from questionnaires.protocol.jsontypes import JsonValue


class _ToDict(Protocol):
    def to_dict(self) -> Mapping[str, JsonValue]: ...


class ChatError(Exception):
    """A refusal the user or API client should see: `code` is stable, `message` localized,
    optional `details`, and for invalid answers the per-question protocol `errors`."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int = 400,
        details: Mapping[str, JsonValue] | None = None,
        errors: Sequence[_ToDict] = (),
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = str(message)
        self.status = status
        self.details: dict[str, JsonValue] = dict(details or {})
        self.errors = tuple(errors)

    def field_messages(self) -> dict[str, str]:
        """`details["fields"]` of a refused answer (field -> what is wrong with it)."""
        fields = self.details.get("fields")
        return {str(k): str(v) for k, v in fields.items()} if isinstance(fields, Mapping) else {}

    def as_dict(self) -> dict[str, JsonValue]:
        body: dict[str, JsonValue] = {"error": self.code, "message": self.message}
        details = dict(self.details)
        if self.errors:
            details["errors"] = [e.to_dict() for e in self.errors]
        if details:
            body["details"] = details
        return body


class NotFound(ChatError):
    def __init__(self, message: str = "Not found.") -> None:
        super().__init__("not_found", message, status=404)


class FormError(ChatError):
    """A refused interactive-form operation."""
