"""The import contracts bite: each planted violation breaks the contract that forbids it.

`lint-imports` (in `make lint`) checks pyproject.toml's contracts against the code. A
contract that stopped matching anything would pass silently forever, so here every contract
meets an import it must refuse: added to a copy of the real import graph, then checked with
import-linter's own contract classes. One test also runs the `lint-imports` command on a
copy of the tree with a violating module planted in it.
"""

from __future__ import annotations

import copy
import functools
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import grimp
import importlinter.api  # noqa: F401 (configures import-linter, as the command does)
import pytest
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import Contract

from tests.support.contracts import AllowedImportsContract, ForbiddenSubmodulesContract

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
TYPES: dict[str, type[Contract]] = {
    "layers": LayersContract,
    "independence": IndependenceContract,
    "forbidden": ForbiddenContract,
    "allowed_imports": AllowedImportsContract,
    "forbidden_submodules": ForbiddenSubmodulesContract,
}
ACYCLIC = "acyclic_siblings"


@functools.cache
def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(*CONFIG["root_packages"], include_external_packages=True)


def _contract(contract_id: str) -> Contract:
    options = next(c for c in CONFIG["contracts"] if c["id"] == contract_id)
    cls = TYPES.get(options["type"])
    if cls is None:
        from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract

        cls = AcyclicSiblingsContract
    session = {k: v for k, v in CONFIG.items() if k != "contracts"}
    return cls(name=options["name"], session_options=session, contract_options=options)


def _kept(contract_id: str, plant: tuple[str, str, str] | None = None) -> bool:
    graph = copy.deepcopy(_graph())
    if plant is not None:
        importer, imported, line = plant
        if "." not in imported and imported not in graph.modules:
            graph.add_module(imported, is_squashed=True)
        graph.add_import(importer=importer, imported=imported, line_number=1, line_contents=line)
    return bool(_contract(contract_id).check(graph, verbose=False).kept)


# (contract id, importer, imported as the graph names it, the import statement)
PLANTED: list[tuple[str, str, str, str]] = [
    ("kinds-independent", "questionnaires.asks.services", "questionnaires.forms.models",
     "from questionnaires.forms.models import InteractiveForm"),
    ("kinds-independent", "questionnaires.elicitations.views", "questionnaires.inline.selectors",
     "from questionnaires.inline import selectors"),
    ("kind-order", "questionnaires.forms.presenter", "questionnaires.forms.services",
     "from questionnaires.forms.services import form_open"),
    ("kind-order", "questionnaires.asks.models", "questionnaires.asks.views",
     "from questionnaires.asks import views"),
    ("kinds-below-agent", "questionnaires.inline.services", "chat.edge.page",
     "from chat.edge.page import message_items"),
    ("kinds-below-agent", "questionnaires.elicitations.selectors", "chat.mcphost.client",
     "from chat.mcphost import client"),
    ("kinds-above-base", "questionnaires.drafts", "questionnaires.asks.models",
     "from questionnaires.asks.models import StructuredAnswer"),
    ("kinds-above-base", "chat.core.services", "questionnaires.forms.selectors",
     "from questionnaires.forms.selectors import form_pending"),
    ("layers", "questionnaires.registry", "chat.edge.page",
     "from chat.edge.page import MessageItem"),
    ("layers", "chat.core.services", "chat.runs.dispatch",
     "from chat.runs.dispatch import run_dispatch"),
    ("layers", "questionnaires.registry", "questionnaires.drafts",
     "from questionnaires.drafts import drafts_for"),
    ("no-circles", "chat.edge.views", "chat.skills.api", "from chat.skills import api"),
    ("protocol-pure", "questionnaires.protocol.scanner", "celery", "import celery"),
    ("protocol-pure", "questionnaires.protocol.normalize", "pydantic",
     "from pydantic import BaseModel"),
    ("protocol-pure", "questionnaires.protocol.parser", "django",
     "from django.utils.translation import gettext"),
    ("protocol-pure", "questionnaires.protocol.parser", "chat.rendering",
     "from chat.rendering import markdown_to_html"),
    ("rendering-no-db", "chat.rendering", "django", "from django.db import connection"),
    ("rendering-no-db", "questionnaires.inline.render", "chat.core.models",
     "from chat.core.models import Message"),
    ("rendering-no-db", "questionnaires.protocol.segments", "django",
     "from django.db.models import Q"),
    ("loop-pure", "chat.agent.loop", "django", "from django.conf import settings"),
    ("loop-pure", "chat.agent.events", "chat.core.models", "from chat.core.models import Run"),
]  # fmt: skip


def test_every_contract_holds_today():
    for options in CONFIG["contracts"]:
        assert _kept(options["id"]), options["name"]


@pytest.mark.parametrize(("contract_id", "importer", "imported", "line"), PLANTED)
def test_a_planted_violation_breaks_its_contract(contract_id, importer, imported, line):
    assert not _kept(contract_id, (importer, imported, line))


def test_every_contract_has_a_planted_violation():
    planted = {p[0] for p in PLANTED}
    assert {c["id"] for c in CONFIG["contracts"]} == planted


def test_the_docs_list_every_contract():
    """docs/architecture.md says what each contract forbids; the README's map names them."""
    for doc in ("docs/architecture.md", "README.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        for options in CONFIG["contracts"]:
            assert f"`{options['id']}`" in text, (doc, options["id"])


def test_lint_imports_fails_on_a_planted_module(tmp_path):
    """The command itself, on a copy of the tree where one kind imports another."""
    for name in ("chat", "questionnaires"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests" / "support").mkdir(parents=True)
    for name in ("tests/__init__.py", "tests/support/__init__.py", "tests/support/contracts.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"]
    clean = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    planted = tmp_path / "questionnaires" / "asks" / "planted.py"
    planted.write_text("from questionnaires.forms import models  # noqa\n")
    broken = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    output: Any = broken.stdout
    assert broken.returncode == 1, output
    assert "Kinds never import each other BROKEN" in " ".join(output.split())
    assert "questionnaires.asks.planted" in output


def test_every_registered_kind_is_in_the_kind_contracts(settings):
    """A new kind is a subpackage, its line in QUESTIONNAIRE_KINDS, and its name in the
    three contracts that hold kinds apart (an import-linter contract can't read settings)."""
    packages = {path.rsplit(".", 2)[0] for path in settings.QUESTIONNAIRE_KINDS}
    by_id = {c["id"]: c for c in CONFIG["contracts"]}
    assert packages == set(by_id["kinds-independent"]["modules"])
    assert packages == set(by_id["kind-order"]["containers"])
    assert packages == set(by_id["kinds-above-base"]["forbidden_modules"])
