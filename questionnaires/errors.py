"""The questionnaires layer's one exception root (it can't use `chat.errors`)."""

from __future__ import annotations

from typing import Any

from questionnaires.protocol import ProtocolError


class QuestionnaireError(Exception):
    """A refusal: a stable `code`, a localized `message`, an HTTP `status`, optional
    `details`, and for invalid answers the per-question protocol `errors`."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int = 400,
        details: dict[str, Any] | None = None,
        errors: tuple[ProtocolError, ...] = (),
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = str(message)
        self.status = status
        self.details = details or {}
        self.errors = errors

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "message": self.message}
        details = dict(self.details)
        if self.errors:
            details["errors"] = [e.to_dict() for e in self.errors]
        if details:
            body["details"] = details
        return body


class SubmitRefused(QuestionnaireError):
    """A refused questionnaire card submit."""


class FormError(QuestionnaireError):
    """A refused interactive-form operation."""
