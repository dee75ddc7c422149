"""Two import-linter contract types the built-in ones can't express (pyproject.toml uses them).

- `allowed_imports`: the modules of `source_modules` may import only what `allowed_modules`
  lists — `stdlib` (the running Python's standard library), external distributions by their
  top-level name, internal modules (with their descendants) — plus one another. An
  allow-list: a new dependency (celery, pydantic, django) breaks it without anyone having
  thought to forbid it.
- `forbidden_submodules`: neither the modules of `source_modules` nor any project module
  they import (directly or not) may import `forbidden_modules`, which may name parts of an
  external package (`django.db`). import-linter keeps one node per external distribution,
  so the built-in `forbidden` contract can forbid `django` but not `django.db`; this reads
  the import statements themselves.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import grimp
from importlinter import Contract, ContractCheck, fields, output
from importlinter.domain import helpers

STDLIB = "stdlib"
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.,\s]+?)\s*(?:#.*)?$)")


@dataclass(frozen=True)
class Violation:
    importer: str
    imported: str  # as written in the import statement (for externals: the dotted name)
    line_number: int
    via: str = ""  # for forbidden_submodules: the source module that reaches the importer

    def render(self) -> str:
        where = f"{self.importer} (l.{self.line_number}) imports {self.imported}"
        return f"{where}, reached from {self.via}" if self.via else where


def _written_names(line: str, top: str) -> list[str]:
    """The dotted names an import line imports from the distribution `top`."""
    match = _IMPORT.match(line)
    if match is None:
        return [top]
    if match.group(1):
        return [match.group(1)]
    names = [part.strip().split(" ")[0] for part in match.group(2).split(",")]
    return [n for n in names if n == top or n.startswith(f"{top}.")] or [top]


def _imports_of(graph: grimp.ImportGraph, module: str) -> list[tuple[str, int]]:
    """(dotted name as imported, line number) of every direct import of `module`."""
    found = []
    for imported in sorted(graph.find_modules_directly_imported_by(module)):
        for detail in graph.get_import_details(importer=module, imported=imported):
            line = str(detail["line_contents"])
            is_external = graph.is_module_squashed(imported)
            names = _written_names(line, imported) if is_external else [imported]
            found.extend((name, int(detail["line_number"])) for name in names)
    return found


def _matches(name: str, entry: str) -> bool:
    return name == entry or name.startswith(f"{entry}.")


def _sources(graph: grimp.ImportGraph, expressions: object) -> set[str]:
    modules = helpers.module_expressions_to_modules(graph, expressions, as_packages=True)  # type: ignore[arg-type]
    return {m.name for m in modules}


def _render(violations: list[Violation]) -> None:
    for violation in violations:
        output.print_error(f"- {violation.render()}", bold=False)
    output.new_line()


class AllowedImportsContract(Contract):
    type_name = "allowed_imports"

    source_modules = fields.ListField(subfield=fields.ModuleExpressionField())
    allowed_modules = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        sources = _sources(graph, self.source_modules)
        allowed: list[str] = list(self.allowed_modules)  # type: ignore[call-overload]
        violations = []
        for module in sorted(sources):
            for name, line in _imports_of(graph, module):
                top = name.partition(".")[0]
                if name in sources or any(_matches(name, entry) for entry in allowed):
                    continue
                if STDLIB in allowed and top in sys.stdlib_module_names | {"__future__"}:
                    continue
                violations.append(Violation(module, name, line))
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print("Imports outside the allow-list:")
        output.new_line()
        _render(check.metadata["violations"])


class ForbiddenSubmodulesContract(Contract):
    type_name = "forbidden_submodules"

    source_modules = fields.ListField(subfield=fields.ModuleExpressionField())
    forbidden_modules = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        forbidden: list[str] = list(self.forbidden_modules)  # type: ignore[call-overload]
        violations = []
        for source in sorted(_sources(graph, self.source_modules)):
            reached = {source} | {
                m for m in graph.find_upstream_modules(source) if not graph.is_module_squashed(m)
            }
            for module in sorted(reached):
                for name, line in _imports_of(graph, module):
                    if any(_matches(name, entry) for entry in forbidden):
                        via = source if module != source else ""
                        violations.append(Violation(module, name, line, via))
        unique = sorted(set(violations), key=lambda v: (v.importer, v.line_number, v.via))
        return ContractCheck(kept=not unique, metadata={"violations": unique})

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print("Forbidden imports:")
        output.new_line()
        _render(check.metadata["violations"])
