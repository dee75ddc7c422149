from __future__ import annotations

import pytest

from tests.support.asking import QUESTIONS, open_form  # noqa: F401 (shared)


@pytest.fixture
def pending(conversation):
    message, result = open_form(conversation)
    assert result["success"] is True, result
    return message
