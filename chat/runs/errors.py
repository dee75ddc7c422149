"""The runs package's expected failure of a turn."""

from __future__ import annotations


class RunFailed(Exception):
    """A turn function's expected failure: a stable `code` and a human `message`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
