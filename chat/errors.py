"""The chat layer's one exception root: a stable machine code, a human message, a status."""

from __future__ import annotations

from typing import Any


class ChatError(Exception):
    """A refusal the user or API client should see: `code` is stable, `message` localized."""

    def __init__(
        self, code: str, message: str, *, status: int = 400, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = str(message)
        self.status = status
        self.details = details or {}

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "message": self.message}
        if self.details:
            body["details"] = self.details
        return body


class NotFound(ChatError):
    def __init__(self, message: str = "Not found.") -> None:
        super().__init__("not_found", message, status=404)
