"""Build files compared by what they declare (contract section 2, "Trust-root files",
revised 2026-12-04; issue 37 item 2): a missing file and one declaring no `pytest11`
entry point are equal, a byte-order mark is not a parse error, a file that cannot be
parsed counts only when its text mentions `pytest11`, and a setup.py that never names
the group declares nothing. Pure: no git, no pytest process."""

from __future__ import annotations

import pytest

from andgate.git import Change
from andgate.trust import paths
from andgate.trust.plugin_declarations import (
    NOTHING,
    Unreadable,
    change,
    declarations,
    declared_entries,
    mentions,
)
from andgate.trust.project_plugins import declared_plugins

BOM = b"\xef\xbb\xbf"
PACKAGING_PYPROJECT = b"""[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "minilib"
version = "1.0"
dependencies = ["attrs"]

[project.entry-points.console_scripts]
minilib = "minilib.cli:main"
"""
PLUGIN_PYPROJECT = PACKAGING_PYPROJECT + b'\n[project.entry-points.pytest11]\nx = "minilib.p"\n'
PACKAGING_CFG = b"[metadata]\nname = minilib\nversion = 1.0\n\n[options]\npackages = find:\n"
PLUGIN_CFG = PACKAGING_CFG + b"\n[options.entry_points]\npytest11 =\n    x = minilib.p\n"
PACKAGING_SETUP_PY = b"""from setuptools import setup

setup(
    name="minilib",
    version="1.0",
    entry_points={"console_scripts": ["minilib = minilib.cli:main"]},
)
"""
PLUGIN_SETUP_PY = b"""from setuptools import setup

setup(name="minilib", entry_points={"pytest11": ["x = minilib.p"]})
"""


# -- a missing file and one that declares nothing are equal -------------------------


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("pyproject.toml", PACKAGING_PYPROJECT),
        ("pyproject.toml", b""),
        ("setup.cfg", PACKAGING_CFG),
        ("setup.cfg", b""),
        ("setup.py", PACKAGING_SETUP_PY),
        ("setup.py", b""),
        ("sub/setup.py", b"import setuptools\nsetuptools.setup()\n"),
    ],
)
def test_a_packaging_only_build_file_added_or_deleted_is_no_declaration_change(name, data):
    assert declarations(name, data) == declarations(name, None) == NOTHING
    assert change(name, None, data) is None, "added"
    assert change(name, data, None) is None, "deleted"


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("pyproject.toml", PLUGIN_PYPROJECT),
        ("pyproject.toml", b'[tool.poetry.plugins."pytest11"]\nx = "pkg.plugin"\n'),
        ("setup.cfg", PLUGIN_CFG),
        ("setup.cfg", b"[options]\nentry_points = file: entry_points.cfg\n"),
        (
            "pyproject.toml",
            b'[project]\ndynamic = ["entry-points"]\n'
            b'[tool.setuptools.dynamic]\nentry-points = {file = "ep.ini"}\n',
        ),
        ("setup.py", PLUGIN_SETUP_PY),
    ],
)
def test_a_build_file_that_declares_plugins_added_or_deleted_is_a_change(name, data):
    assert change(name, None, data) is not None, "added"
    assert change(name, data, None) is not None, "deleted"
    assert "pytest11" in (change(name, None, data) or "")


def test_moving_packaging_from_setup_py_to_pyproject_changes_no_declaration():
    changes = [
        Change("D", "setup.py", "setup.py", "100644", "000000"),
        Change("A", "pyproject.toml", "pyproject.toml", "000000", "100644"),
    ]
    old = {"setup.py": PACKAGING_SETUP_PY}
    new = {"pyproject.toml": PACKAGING_PYPROJECT}
    found = paths.config_changes(changes, old.get, new.get)
    assert found.plugins == {}


# -- a byte-order mark is not a parse error ------------------------------------------


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("setup.cfg", PACKAGING_CFG),
        ("setup.cfg", PLUGIN_CFG),
        ("pyproject.toml", PACKAGING_PYPROJECT),
        ("pyproject.toml", PLUGIN_PYPROJECT),
        ("setup.py", PLUGIN_SETUP_PY),
    ],
)
def test_a_byte_order_mark_reads_as_the_same_declarations(name, data):
    assert declarations(name, BOM + data) == declarations(name, data)
    assert declared_entries(name, BOM + data) == declared_entries(name, data)
    assert change(name, data, BOM + data) is None


def test_a_version_bump_in_a_setup_cfg_with_a_bom_is_no_declaration_change():
    old = BOM + PLUGIN_CFG
    assert change("setup.cfg", old, old.replace(b"version = 1.0", b"version = 1.1")) is None
    moved = old.replace(b"x = minilib.p", b"x = minilib.evil")
    assert "differ" in (change("setup.cfg", old, moved) or "")


def test_what_a_trusted_run_may_load_is_read_through_a_bom_too():
    assert declared_plugins({"setup.cfg": BOM + PLUGIN_CFG}) == {("x", "minilib.p")}
    assert declared_plugins({"pyproject.toml": BOM + PLUGIN_PYPROJECT}) == {("x", "minilib.p")}


# -- a file that cannot be parsed counts only when it mentions pytest11 ----------------


@pytest.mark.parametrize(
    ("name", "broken"),
    [
        ("pyproject.toml", b'[project\nname = "minilib"\n'),
        ("pyproject.toml", b"\xff\xfe not utf-8"),
        ("setup.cfg", b"no section header\nname = minilib\n"),
        ("setup.py", b"from setuptools import setup\nsetup(\n"),
    ],
)
def test_an_unparsable_file_that_never_mentions_pytest11_is_no_declaration_change(name, broken):
    with pytest.raises(Unreadable):
        declarations(name, broken)
    assert change(name, None, broken) is None
    assert change(name, broken, None) is None
    quiet = {"pyproject.toml": PACKAGING_PYPROJECT, "setup.cfg": PACKAGING_CFG}
    assert change(name, quiet.get(name, PACKAGING_SETUP_PY), broken) is None


@pytest.mark.parametrize(
    ("name", "broken"),
    [
        ("pyproject.toml", b"[project.entry-points.pytest11\nx = 'pkg.p'\n"),
        ("pyproject.toml", b"[project.entry-points.PYTEST11\n"),
        ("pyproject.toml", b'[project.entry-points."pytest\\u0031\\u0031"\n'),
        ("pyproject.toml", b"# pytest11 \xff\n"),
        ("setup.cfg", b"pytest11 = x = pkg.p\n[options.entry_points]\n"),
        ("setup.py", b"setup(entry_points={'pytest11': [\n"),
    ],
)
def test_an_unparsable_file_that_mentions_pytest11_counts(name, broken):
    why = change(name, None, broken)
    assert why is not None and "cannot be read" in why, why
    assert change(name, broken, None) is not None


def test_an_unparsable_side_counts_when_the_other_side_declares_plugins():
    # the readable side declares through `file:`, which never names pytest11
    declaring = b"[options]\nentry_points = file: ep.cfg\n"
    assert change("setup.cfg", declaring, b"broken\n") is not None
    assert change("setup.cfg", PACKAGING_CFG, b"broken\n") is None


def test_an_unparsable_file_lets_a_trusted_run_load_nothing():
    broken = b"[project.entry-points.pytest11\nx = 'pkg.p'\n"
    with pytest.raises(Unreadable):
        declared_entries("pyproject.toml", broken)
    assert declared_plugins({"pyproject.toml": broken}) == frozenset()


# -- setup.py: code, compared by its syntax tree only when it names pytest11 -------------


@pytest.mark.parametrize(
    "edited",
    [
        PACKAGING_SETUP_PY.replace(b'"1.0"', b'"1.1"'),
        PACKAGING_SETUP_PY.replace(
            b'version="1.0",', b'version="1.0", install_requires=["attrs"],'
        ),
        b"import setuptools\n\nsetuptools.setup(name='other', packages=['a', 'b'])\n",
    ],
)
def test_editing_a_setup_py_that_never_names_pytest11_is_no_declaration_change(edited):
    assert change("setup.py", PACKAGING_SETUP_PY, edited) is None


@pytest.mark.parametrize(
    "spelling",
    [
        b"'pytest11'",
        b"'PyTest11'",
        b"'pytest' '11'",  # adjacent literals are one constant
        b"'pytest\\x311'",
        b"'pytest\\u0031\\u0031'",
    ],
)
def test_a_setup_py_that_names_pytest11_in_any_spelling_counts_by_its_syntax_tree(spelling):
    source = b"from setuptools import setup\nsetup(entry_points={%s: ['x = pkg.p']})\n" % spelling
    assert mentions("setup.py", source)
    assert change("setup.py", PACKAGING_SETUP_PY, source) is not None, "declared"
    edited = source.replace(b"setup(", b"setup(version='2', ")
    why = change("setup.py", source, edited)
    assert why is not None and "setup.py is code" in why
    # comments and layout are not code
    assert change("setup.py", source, b"# a comment\n" + source) is None


def test_a_setup_py_in_a_declared_encoding_is_read_as_python_reads_it():
    latin = b"# -*- coding: latin-1 -*-\nsetup(author='Jos\xe9', entry_points={'pytest11': []})\n"
    assert declarations("setup.py", latin) != NOTHING
    assert change("setup.py", latin, latin.replace(b"Jos\xe9", b"Ren\xe9")) is not None


def test_a_computed_setup_py_declaration_is_never_one_a_trusted_run_loads():
    """The decision in the module's docstring: a setup.py that builds the group's name
    is not a trust-root change, and what it declares is not trusted either."""
    computed = (
        b"from setuptools import setup\nsetup(entry_points={'pytest' + '11': ['x = pkg.p']})\n"
    )
    assert change("setup.py", PACKAGING_SETUP_PY, computed) is None
    assert declared_plugins({"setup.py": computed}) == frozenset()
    escaped = b"setup(entry_points={'pytest\\x311': ['x = pkg.p']})\n"
    assert declared_plugins({"setup.py": escaped}) == frozenset()  # literal text only


# -- a symbolic link ---------------------------------------------------------------------


def test_a_build_file_that_becomes_a_symbolic_link_counts():
    link = Change("T", "setup.py", "setup.py", "100644", "120000")
    found = paths.config_changes(
        [link], {"setup.py": PACKAGING_SETUP_PY}.get, {"setup.py": b"build/setup_impl.py"}.get
    )
    assert "symbolic link" in found.plugins["setup.py"]
