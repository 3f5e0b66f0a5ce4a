"""Unit tests of the import redirection (`redirect.py`) and of finding the
project's installed distributions (`installed.py`), without pip or pytest runs."""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

from andgate.plugin import redirect
from andgate.process import installed


@pytest.fixture(autouse=True)
def children_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """`apply` sets PYTHONPATH for the processes tests start: restored after each test."""
    monkeypatch.setenv("PYTHONPATH", "")


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    checkout, worktree = tmp_path / "checkout", tmp_path / "wt"
    for root in (checkout, worktree):
        (root / "src" / "pkg").mkdir(parents=True)
        (root / "src" / "pkg" / "__init__.py").write_text("")
    (checkout / ".venv" / "site").mkdir(parents=True)  # untracked: no counterpart
    return checkout, worktree


def test_remapper_maps_checkout_paths_with_a_counterpart(trees):
    checkout, worktree = trees
    remap = redirect.remapper(str(checkout), str(worktree))
    assert remap(str(checkout / "src")) == str(worktree / "src")
    assert remap(str(checkout / "src" / "pkg" / "__init__.py")) == str(
        worktree / "src" / "pkg" / "__init__.py"
    )
    assert remap(str(checkout / ".venv" / "site")) is None
    assert remap(str(worktree / "src")) is None
    assert remap("/usr/lib/python3") is None
    assert remap("relative/src") is None


def test_worktree_inside_the_checkout_is_left_alone(tmp_path):
    checkout = tmp_path / "repo"
    worktree = checkout / "tmp" / "wt"
    (worktree / "src").mkdir(parents=True)
    (checkout / "src").mkdir()
    remap = redirect.remapper(str(checkout), str(worktree))
    assert remap(str(worktree / "src")) is None
    assert remap(str(checkout / "src")) == str(worktree / "src")


def test_apply_rewrites_sys_path_and_editable_finders(trees, monkeypatch):
    checkout, worktree = trees
    finder_module = types.ModuleType("__editable___pkg_0_1_finder")
    finder_module.MAPPING = {"pkg": str(checkout / "src" / "pkg")}
    finder_module.NAMESPACES = {"ns": [str(checkout / "src")]}

    class Finder:
        _redirections = {"pkg": str(checkout / "src" / "pkg" / "__init__.py")}

    Finder.__module__ = finder_module.__name__
    monkeypatch.setitem(sys.modules, finder_module.__name__, finder_module)
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    monkeypatch.setattr(sys, "path", [str(checkout / "src"), str(checkout / ".venv" / "site")])
    redirect.apply(str(checkout), str(worktree), roots=["src"])
    assert sys.path == [str(worktree / "src"), str(checkout / ".venv" / "site")]
    assert {"pkg": str(worktree / "src" / "pkg")} == finder_module.MAPPING
    assert {"ns": [str(worktree / "src")]} == finder_module.NAMESPACES
    assert Finder._redirections == {"pkg": str(worktree / "src" / "pkg" / "__init__.py")}
    assert os.environ["PYTHONPATH"] == str(worktree / "src")


@pytest.mark.parametrize(
    ("path_entry", "mapping"),
    [
        (True, {}),  # a `.pth` path entry (setuptools src layout, hatchling)
        (False, {"pkg": "src/pkg"}),  # setuptools' finder
        (False, {"pkg": "src/pkg/__init__.py"}),  # the editables redirector (hatch exact)
    ],
    ids=["pth", "finder", "redirector"],
)
def test_the_processes_tests_start_import_the_worktrees_project_first(
    trees, monkeypatch, path_entry, mapping
):
    """A test that runs `python -m pkg` (or pytester's `runpytest_subprocess`) starts an
    interpreter whose site re-adds the install's entries, which point at the checkout:
    PYTHONPATH puts the worktree's folder ahead of them, and keeps the user's own."""
    checkout, worktree = trees
    finder_module = types.ModuleType("__editable___pkg_0_2_finder")
    finder_module.MAPPING = {name: str(checkout / rel) for name, rel in mapping.items()}

    class Finder:
        pass

    Finder.__module__ = finder_module.__name__
    monkeypatch.setitem(sys.modules, finder_module.__name__, finder_module)
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    monkeypatch.setattr(sys, "path", [str(checkout / "src")] if path_entry else [])
    monkeypatch.setenv("PYTHONPATH", "/opt/lib")
    redirect.apply(str(checkout), str(worktree))  # no roots: found from the install alone
    assert os.environ["PYTHONPATH"].split(os.pathsep) == [str(worktree / "src"), "/opt/lib"]


def test_apply_puts_a_copy_installs_roots_first(trees, monkeypatch):
    checkout, worktree = trees
    monkeypatch.setattr(sys, "path", ["/site-packages"])
    # the user's own PYTHONPATH, one entry in the checkout: it points here too
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(checkout / "src" / "pkg"), "/opt"]))
    redirect.apply(str(checkout), str(worktree), roots=["src", "."])
    assert sys.path == [str(worktree / "src"), str(worktree), "/site-packages"]
    children = [str(worktree / "src"), str(worktree), str(worktree / "src" / "pkg"), "/opt"]
    assert os.environ["PYTHONPATH"].split(os.pathsep) == children


def test_foreign_modules_names_checkout_and_installed_copies(trees, monkeypatch):
    checkout, worktree = trees
    for name, file in (
        ("pkg", checkout / "src" / "pkg" / "__init__.py"),
        ("pkg.sub", "/site-packages/pkg/sub.py"),
        ("fine", worktree / "src" / "pkg" / "__init__.py"),
    ):
        module = types.ModuleType(name)
        module.__file__ = str(file)
        monkeypatch.setitem(sys.modules, name, module)
    found = redirect.foreign_modules(str(checkout), str(worktree), names=["pkg"])
    assert found == [
        f"pkg from {checkout / 'src' / 'pkg' / '__init__.py'}",
        "pkg.sub from /site-packages/pkg/sub.py",
    ]


def _modules(monkeypatch, modules) -> None:
    for name, file in modules:
        module = types.ModuleType(name)
        module.__file__ = str(file)
        monkeypatch.setitem(sys.modules, name, module)


@pytest.fixture
def site(tmp_path: Path, monkeypatch) -> Path:
    """A site-packages folder on sys.path, as a virtualenv's."""
    folder = tmp_path / "venv" / "lib" / "python3" / "site-packages"
    folder.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(folder)])
    return folder


def test_modules_the_projects_importer_files_under_its_name_are_not_foreign(
    trees, site, monkeypatch
):
    """six.moves: standard-library modules registered under the project's name, and
    another installed distribution's module aliased the same way."""
    import configparser
    import http.server

    checkout, worktree = trees
    (site / "other").mkdir()
    (site / "other" / "__init__.py").write_text("")
    _modules(
        monkeypatch,
        [
            ("pkg.moves.BaseHTTPServer", http.server.__file__),
            ("pkg.moves.configparser", configparser.__file__),
            ("pkg.vendored", site / "other" / "__init__.py"),
            ("pkg", worktree / "src" / "pkg" / "__init__.py"),
        ],
    )
    assert redirect.foreign_modules(str(checkout), str(worktree), ["pkg"], roots=["src"]) == []


def test_the_projects_own_files_from_anywhere_but_the_worktree_are_foreign(
    trees, site, monkeypatch
):
    """Fail closed: a copy of a worktree file (in site-packages too), a file the
    project's installed distribution holds (its compiled extension, which the
    worktree does not have), and a file in no place distributions are installed."""
    checkout, worktree = trees
    (worktree / "src" / "pkg" / "core.py").write_text("")
    (site / "pkg").mkdir()
    extension = site / "pkg" / "_speedups.cpython-311-x86_64-linux-gnu.so"
    for path in (site / "pkg" / "__init__.py", site / "pkg" / "core.py", extension):
        path.write_text("")
    record = site / "samplepkg-0.1.dist-info"
    record.mkdir()
    (record / "METADATA").write_text("Metadata-Version: 2.1\nName: samplepkg\nVersion: 0.1\n")
    (record / "RECORD").write_text(f"pkg/{extension.name},,\n")
    elsewhere = worktree.parent / "elsewhere" / "pkg_helpers.py"
    _modules(
        monkeypatch,
        [
            ("pkg", site / "pkg" / "__init__.py"),
            ("pkg.core", site / "pkg" / "core.py"),
            ("pkg._speedups", extension),
            ("pkg.helpers", elsewhere),
        ],
    )
    found = redirect.foreign_modules(
        str(checkout), str(worktree), ["pkg"], roots=["src"], distributions=["samplepkg"]
    )
    assert found == [
        f"pkg from {site / 'pkg' / '__init__.py'}",
        f"pkg._speedups from {extension}",
        f"pkg.core from {site / 'pkg' / 'core.py'}",
        f"pkg.helpers from {elsewhere}",
    ]
    # without the distribution's record, its extension looks like any installed file
    assert f"pkg._speedups from {extension}" not in redirect.foreign_modules(
        str(checkout), str(worktree), ["pkg"], roots=["src"]
    )


def test_root_of_a_name_is_its_shallowest_folder_outside_tests():
    paths = ["src/pkg/__init__.py", "tests/pkg/test_a.py", "pkg.py", "docs/conf.py"]
    assert installed._root_of("pkg", paths[:2]) == "src"
    assert installed._root_of("pkg", ["tests/pkg/test_a.py"]) is None
    assert installed._root_of("pkg", ["pkg.py"]) == "."
    assert installed._root_of("other", paths) is None


class FakeDist:
    def __init__(self, files: dict[str, str], listed: list[str]) -> None:
        self._files = files
        self.files = listed
        self.metadata = {"Name": "fake"}

    def read_text(self, name: str) -> str | None:
        return self._files.get(name)


def test_distributions_installed_from_the_checkout_are_found(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    here = FakeDist(
        {"direct_url.json": json.dumps({"url": repo.as_uri(), "dir_info": {}})},
        ["pkg/__init__.py", "pkg/core.py", "fake-0.1.dist-info/RECORD", "__editable___x_finder.py"],
    )
    elsewhere = FakeDist({"direct_url.json": json.dumps({"url": "file:///other"})}, ["other.py"])
    from_pypi = FakeDist({}, ["requests/__init__.py"])
    monkeypatch.setattr(installed.metadata, "distributions", lambda: [here, elsewhere, from_pypi])
    project = installed.find_installed_project(repo, ["src/pkg/__init__.py", "tests/test_a.py"])
    assert project.names == ("pkg",)
    assert project.roots == ("src",)


@pytest.mark.parametrize(
    ("dist_name", "pth", "tracked", "found"),
    [
        # hatchling: humanize, src layout
        ("humanize", "_editable_impl_humanize.pth", "src/humanize/__init__.py", ("humanize",)),
        # flit: more-itertools, flat layout, the name normalised
        ("more-itertools", "more_itertools.pth", "more_itertools/more.py", ("more_itertools",)),
        (
            "Zope.Interface",
            "zope_interface.pth",
            "src/zope_interface/__init__.py",
            ("zope_interface",),
        ),
        # the repository holds no package of the distribution's name: nothing guessed
        ("docs-tools", "docs_tools.pth", "tools/build.py", ()),
    ],
)
def test_an_editable_install_that_is_only_a_path_entry_is_named_after_its_distribution(
    tmp_path, monkeypatch, dist_name, pth, tracked, found
):
    """Its RECORD names a `.pth` file and metadata, no module; the path entry's
    folder may hold more than the project (a flat layout's docs/), so the name is the
    distribution's, kept only when the repository holds a package of that name."""
    repo = tmp_path / "repo"
    repo.mkdir()
    dist = FakeDist(
        {"direct_url.json": json.dumps({"url": repo.as_uri(), "dir_info": {"editable": True}})},
        [pth, "x-1.0.dist-info/RECORD", "x-1.0.dist-info/direct_url.json"],
    )
    dist.metadata = {"Name": dist_name}
    monkeypatch.setattr(installed.metadata, "distributions", lambda: [dist])
    project = installed.find_installed_project(repo, [tracked, "docs/conf.py", "tests/t.py"])
    assert project.names == found
    # Without the path entry (a wheel's copy naming no module), still nothing guessed.
    dist.files = ["x-1.0.dist-info/RECORD"]
    assert installed.find_installed_project(repo, [tracked]).names == ()


def test_real_paths_resolves_linked_folders_and_linked_files_like_realpath(tmp_path):
    outside = tmp_path / "checkout"
    (outside / "pkg").mkdir(parents=True)
    (outside / "pkg" / "mod.py").write_text("")
    (outside / "single.py").write_text("")
    site = tmp_path / "site"
    site.mkdir()
    (site / "pkg").symlink_to(outside / "pkg")  # a linked package folder
    (site / "single.py").symlink_to(outside / "single.py")  # flit --symlink, one module
    (site / "plain.py").write_text("")
    real = redirect.real_paths()
    paths = [site / "pkg" / "mod.py", site / "single.py", site / "plain.py", site / "pkg" / ".."]
    for path in [*paths, *paths]:  # the second time from the folder cache
        assert real(str(path)) == os.path.realpath(path)


def test_a_module_audited_clean_is_audited_again_once_replaced_or_moved(trees, monkeypatch):
    checkout, worktree = trees
    monkeypatch.setattr(redirect, "_AUDITED", {})
    clean = types.ModuleType("late")
    clean.__file__ = str(worktree / "src" / "pkg" / "__init__.py")
    monkeypatch.setitem(sys.modules, "late", clean)
    redirect.apply(str(checkout), str(worktree))
    assert redirect.foreign_modules(str(checkout), str(worktree), names=[]) == []
    from_checkout = str(checkout / "src" / "pkg" / "__init__.py")
    swapped = types.ModuleType("late")  # another object under the audited name
    swapped.__file__ = from_checkout
    monkeypatch.setitem(sys.modules, "late", swapped)
    assert redirect.foreign_modules(str(checkout), str(worktree), names=[]) == [
        f"late from {from_checkout}"
    ]
    monkeypatch.setitem(sys.modules, "late", clean)
    clean.__file__ = from_checkout  # the audited object, now naming another file
    assert redirect.foreign_modules(str(checkout), str(worktree), names=[]) == [
        f"late from {from_checkout}"
    ]


def test_the_last_audit_resolves_again_a_file_linked_into_the_checkout_since(trees, monkeypatch):
    """A test may replace a worktree file with a link into the checkout and reload the
    module under the same name and object: the session's end still finds it."""
    checkout, worktree = trees
    monkeypatch.setattr(redirect, "_AUDITED", {})
    (checkout / "helpers.py").write_text("")
    target = worktree / "helpers.py"
    target.write_text("")
    helpers = types.ModuleType("helpers")
    helpers.__file__ = str(target)
    monkeypatch.setitem(sys.modules, "helpers", helpers)
    redirect.apply(str(checkout), str(worktree))
    target.unlink()
    target.symlink_to(checkout / "helpers.py")
    assert redirect.foreign_modules(str(checkout), str(worktree), names=[]) == [
        f"helpers from {target}"
    ]
