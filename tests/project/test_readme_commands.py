"""The README's first commands: what a newcomer types, and that the Makefile takes it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_first_commands_show_make_run_on_another_port():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```")[1]
    assert re.search(r"^make run PORT=8001\b", first_block, re.M), first_block
    # …and the Makefile really serves on $(PORT), defaulting to the README's 8000.
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^PORT \?= 8000$", makefile, re.M)
    assert "--port $(PORT)" in makefile
