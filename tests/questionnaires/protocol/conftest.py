"""Pure protocol tests: no Django needed (run with ``-p no:django``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

CASES_DIR = Path(__file__).parent / "cases"

VALID_YAML = """title: 任务已暂停
questions:
  - type: single_choice
    text: 是否继续当前任务？
    options:
      - 继续
    default: 继续
"""
VALID_JSON = (
    '{"title":"项目确认","questions":[{"type":"single_choice","text":"下一步如何处理？",'
    '"options":["继续","调整"],"default":"继续"}]}'
)
PLACEHOLDERS = {"{{VALID}}": VALID_YAML, "{{JSON}}": VALID_JSON}


def expand(text: str) -> str:
    for key, value in PLACEHOLDERS.items():
        text = text.replace(key, value)
    return text


def load_cases(filename: str) -> list[dict[str, Any]]:
    with (CASES_DIR / filename).open(encoding="utf-8") as handle:
        cases = yaml.safe_load(handle)
    assert isinstance(cases, list), filename
    return cases


@pytest.fixture(autouse=True)
def _inline_agent_runs() -> Iterator[None]:
    """Overrides the project-wide autouse fixture, which needs Django settings."""
    yield
