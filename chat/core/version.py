"""The product's version, from the installed package's metadata (pyproject.toml's
`version` when the package isn't installed, e.g. a plain checkout on `PYTHONPATH`)."""

from __future__ import annotations

import contextlib
import functools
import tomllib
from importlib import metadata
from pathlib import Path

PRODUCT = "inline-questionnaire-chat"


@functools.cache
def product_version() -> str:
    try:
        return metadata.version(PRODUCT)
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        with contextlib.suppress(OSError, tomllib.TOMLDecodeError):
            return str(tomllib.loads(pyproject.read_text())["project"]["version"])
        return "0"
