"""Logging helpers referenced from `settings.LOGGING` (loaded before the apps: no models)."""

from __future__ import annotations

import logging


class BriefWarningFilter(logging.Filter):
    """Log a client's mistake as one WARNING line: no traceback, not ERROR."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True
