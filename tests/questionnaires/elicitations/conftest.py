from __future__ import annotations

import pytest

from tests.support.asking import SCHEMA, open_elicitation  # noqa: F401 (shared)


@pytest.fixture
def pending(conversation):
    return open_elicitation(conversation)


@pytest.fixture
def pending_url(conversation):
    return open_elicitation(
        conversation,
        mode="url",
        requested_schema=None,
        url="https://bücher.example/pay?x=<b>",
        remote_id="rid-1",
        message="Pay here",
    )
