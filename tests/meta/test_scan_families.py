"""The production scan's families of rules are what the README says they are: each
row of its "What the scan sees" table is one module of `check/production/` that
exposes a `FAMILY` of that name, with exactly the constructs the row names; the
entry point runs every such module's family, each construct belongs to one, and
no family module imports another (what two share lives in `common` or `rules`)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import andgate.check.production
from andgate.check.production.rules import Family
from andgate.check.production.scan import FAMILIES
from andgate.records import Construct

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## What the scan sees"


def readme_rows() -> list[list[str]]:
    """The cells of each row of the section's table, below its header."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def family_modules() -> dict[str, Family]:
    """Module file name -> its FAMILY, for each module of check/production/ that has one."""
    found = {}
    for info in pkgutil.iter_modules(andgate.check.production.__path__):
        module = importlib.import_module(f"andgate.check.production.{info.name}")
        family = getattr(module, "FAMILY", None)
        if family is not None:
            assert isinstance(family, Family), info.name
            found[f"{info.name}.py"] = family
    return found


def test_the_readme_table_has_one_row_per_family_module() -> None:
    rows = readme_rows()
    named = [re.fullmatch(r"`(\w+\.py)`", row[1]) for row in rows]
    assert all(named), [row[1] for row in rows]
    modules = [match.group(1) for match in named if match]
    assert sorted(modules) == sorted(family_modules()), "one row per family module, each once"
    assert len(modules) == len(set(modules))


def test_each_row_names_its_family_and_exactly_its_constructs() -> None:
    families = family_modules()
    values = {c.value for c in Construct}
    for name, module, blocks in readme_rows():
        family = families[module.strip("`")]
        assert name == family.name, module
        named = {Construct(v) for v in re.findall(r"`(\w+)`", blocks) if v in values}
        assert named == family.constructs | family.warns, module


def test_the_entry_point_runs_every_family_module() -> None:
    assert sorted(FAMILIES, key=lambda f: f.name) == sorted(
        family_modules().values(), key=lambda f: f.name
    )


def test_each_construct_belongs_to_exactly_one_family() -> None:
    owners: dict[Construct, list[str]] = {c: [] for c in Construct}
    for family in FAMILIES:
        for construct in family.constructs | family.warns:
            owners[construct].append(family.name)
    assert {c: names for c, names in owners.items() if len(names) != 1} == {}


def test_no_family_module_imports_another() -> None:
    folder = Path(andgate.check.production.__file__).parent
    families = {name.removesuffix(".py") for name in family_modules()}
    for name in families:
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        imported = {
            part
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
            for part in (node.module, *(f"{node.module}.{a.name}" for a in node.names))
        }
        others = {f"andgate.check.production.{f}" for f in families - {name}}
        assert not imported & others, f"{name}.py imports {sorted(imported & others)}"
