"""What a trusted pytest process records about its worktree's modules
(`andgate.plugin.integrity`): each compiled from the bytes it read, with their git blob
id; no bytecode cache ever executed for them; the rest recorded as not verified."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import marshal
import os
import py_compile
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from andgate.git import blob_id
from andgate.plugin import integrity

EMPTY_SHA1 = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
EMPTY_SHA256 = "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"


@pytest.fixture
def worktree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A worktree whose tests/ folder is importable; the modules imported from it and
    the guard are forgotten afterwards (the replaced loader methods stay, inert)."""
    root = tmp_path / "wt"
    (root / "tests").mkdir(parents=True)
    monkeypatch.setattr(integrity, "_GUARD", None)
    before = set(sys.modules)
    monkeypatch.syspath_prepend(str(root / "tests"))
    yield root
    for name in set(sys.modules) - before:
        del sys.modules[name]
    importlib.invalidate_caches()


def guard(root: Path, *test_files: str) -> integrity.Guard:
    return integrity.install(str(root), "sha1", test_files)


def test_blob_ids_are_git_s() -> None:
    assert integrity.blob_id(b"", "sha1") == EMPTY_SHA1
    assert integrity.blob_id(b"", "sha256") == EMPTY_SHA256
    assert integrity.blob_id(b"X = 1\n", "sha1") == blob_id(b"X = 1\n", "0" * 40)


def test_a_worktree_module_is_compiled_from_the_bytes_read_and_recorded(worktree: Path) -> None:
    (worktree / "tests/guarded_helper.py").write_bytes(b"VALUE = 1\r\n")
    watch = guard(worktree, "tests/guarded_helper.py")
    module = importlib.import_module("guarded_helper")
    assert module.VALUE == 1
    report = watch.report()
    assert report["loads"] == [
        {
            "module": "guarded_helper",
            "path": "tests/guarded_helper.py",
            "blob": blob_id(b"VALUE = 1\r\n", "0" * 40),
            "blob_lf": blob_id(b"VALUE = 1\n", "0" * 40),
            "how": "compiled",
        }
    ]
    assert report["unverified"] == [] and report["bytecode"] == []
    assert not (worktree / "tests/__pycache__").exists()  # and it wrote no cache


def test_a_module_read_through_a_symlinked_folder_names_the_file_it_leads_to(
    worktree: Path,
) -> None:
    (worktree / "shared").mkdir()
    (worktree / "shared/guarded_shared.py").write_text("VALUE = 4\n")
    (worktree / "tests/common").symlink_to("../shared")
    watch = guard(worktree)
    assert importlib.import_module("common.guarded_shared").VALUE == 4
    (load,) = [x for x in watch.report()["loads"] if x["module"] == "common.guarded_shared"]
    assert (load["path"], load["real"]) == (
        "tests/common/guarded_shared.py",
        "shared/guarded_shared.py",
    )


def test_a_module_loaded_before_the_guard_is_adopted_with_its_caches_looked_at(
    worktree: Path,
) -> None:
    """An xdist worker imports its `-p` plugins before any hook of andgate's: a test-side
    one is recorded with its file's bytes, and a cache code planted for it is found."""
    source = worktree / "tests/guarded_early.py"
    source.write_text("VALUE = 1\n")
    importlib.import_module("guarded_early")
    plant(source, "VALUE = 2\n")
    report = guard(worktree, "tests/guarded_early.py").report()
    assert [(x["module"], x["how"]) for x in report["loads"]] == [
        ("guarded_early", integrity.BEFORE)
    ]
    assert report["unverified"] == []
    assert [b["source"] for b in report["bytecode"]] == ["tests/guarded_early.py"]


def test_modules_outside_the_worktree_are_not_its_business(worktree: Path) -> None:
    watch = guard(worktree)
    importlib.import_module("json.tool")
    assert watch.report()["loads"] == []


def plant(source: Path, code: str) -> Path:
    """A cache CPython would load for `source` (its mtime and size in the header),
    holding `code` instead."""
    stat = source.stat()
    data = importlib._bootstrap_external._code_to_timestamp_pyc(  # type: ignore[attr-defined]
        compile(code, str(source), "exec"), int(stat.st_mtime), stat.st_size
    )
    cache = Path(importlib.util.cache_from_source(str(source)))
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(data)
    return cache


def test_a_planted_cache_is_what_python_would_run_without_the_guard(worktree: Path) -> None:
    source = worktree / "tests/guarded_planted.py"
    source.write_text("VALUE = 1\n")
    plant(source, "VALUE = 2\n")
    assert importlib.import_module("guarded_planted").VALUE == 2


def test_a_planted_cache_is_never_run_and_is_reported(worktree: Path) -> None:
    source = worktree / "tests/guarded_planted.py"
    source.write_text("VALUE = 1\n")
    cache = plant(source, "VALUE = 2\n")
    watch = guard(worktree, "tests/guarded_planted.py")
    assert importlib.import_module("guarded_planted").VALUE == 1
    assert watch.report()["bytecode"] == [
        {
            "path": cache.relative_to(worktree).as_posix(),
            "source": "tests/guarded_planted.py",
            "module": "guarded_planted",
            "why": "holds code its source does not compile to",
        }
    ]


def test_a_cache_planted_after_the_import_is_found_at_the_end(worktree: Path) -> None:
    source = worktree / "tests/guarded_later.py"
    source.write_text("VALUE = 1\n")
    watch = guard(worktree, "tests/guarded_later.py")
    importlib.import_module("guarded_later")
    plant(source, "VALUE = 2\n")
    assert [b["source"] for b in watch.report()["bytecode"]] == ["tests/guarded_later.py"]


def test_an_honest_cache_and_another_python_s_are_no_finding(worktree: Path) -> None:
    source = worktree / "tests/guarded_honest.py"
    source.write_text("def f(x):\n    assert x, 'why'\n    return [x]\n")
    py_compile.compile(str(source), doraise=True)  # a subprocess of a test, say
    other = source.parent / "__pycache__" / "guarded_honest.cpython-27.pyc"
    other.write_bytes(b"\x03\xf3\r\n" + b"\0" * 12 + b"garbage")
    watch = guard(worktree, "tests/guarded_honest.py")
    importlib.import_module("guarded_honest")
    assert watch.report()["bytecode"] == []


def test_garbage_under_this_python_s_cache_name_is_reported(worktree: Path) -> None:
    source = worktree / "tests/guarded_garbage.py"
    source.write_text("VALUE = 1\n")
    cache = Path(importlib.util.cache_from_source(str(source)))
    cache.parent.mkdir()
    cache.write_bytes(importlib.util.MAGIC_NUMBER + b"\0" * 12 + b"not marshal")
    watch = guard(worktree, "tests/guarded_garbage.py")
    importlib.import_module("guarded_garbage")
    assert [b["why"] for b in watch.report()["bytecode"]] == ["is not valid bytecode"]


def test_bytecode_without_its_source_is_recorded_unverified(worktree: Path) -> None:
    source = worktree / "tests/guarded_sourceless.py"
    source.write_text("VALUE = 3\n")
    py_compile.compile(str(source), cfile=str(worktree / "tests/guarded_sourceless.pyc"))
    source.unlink()
    watch = guard(worktree)
    assert importlib.import_module("guarded_sourceless").VALUE == 3
    assert watch.report()["unverified"] == [
        {
            "module": "guarded_sourceless",
            "path": "tests/guarded_sourceless.pyc",
            "why": "from bytecode without its source",
        }
    ]


def test_a_module_executed_before_it_was_put_in_sys_modules_is_no_finding(
    worktree: Path,
) -> None:
    """Test helpers load data modules with `spec_from_file_location`, `exec_module`,
    then `sys.modules[...] = module`: compiled through the guard all the same."""
    source = worktree / "tests/guarded_data.py"
    source.write_text("VALUE = 5\n")
    watch = guard(worktree, "tests/guarded_data.py")
    spec = importlib.util.spec_from_file_location("guarded_data", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["guarded_data"] = module
    report = watch.report()
    assert [x["path"] for x in report["loads"]] == ["tests/guarded_data.py"]
    assert report["unverified"] == []


def test_a_module_object_the_guard_did_not_compile_is_recorded(worktree: Path) -> None:
    watch = guard(worktree)
    module = type(sys)("guarded_forged")
    module.__file__ = str(worktree / "tests/test_forged.py")
    sys.modules["guarded_forged"] = module
    (entry,) = watch.report()["unverified"]
    assert entry["module"] == "guarded_forged"
    assert entry["path"] == "tests/test_forged.py"
    assert entry["why"] == "without a loader"


class InstrumentingLoader(importlib.machinery.SourceFileLoader):
    """A third-party import hook's loader: its own `source_to_code`."""

    def source_to_code(self, data, path, *, _optimize=-1):  # type: ignore[no-untyped-def,override]
        return compile(data + b"\nINSTRUMENTED = True\n", path, "exec", dont_inherit=True)


def test_a_loader_subclass_s_compile_is_recorded_with_its_class(worktree: Path) -> None:
    source = worktree / "tests/guarded_hooked.py"
    source.write_text("VALUE = 1\n")
    watch = guard(worktree, "tests/guarded_hooked.py")
    spec = importlib.util.spec_from_file_location(
        "guarded_hooked", source, loader=InstrumentingLoader("guarded_hooked", str(source))
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["guarded_hooked"] = module
    spec.loader.exec_module(module)
    assert module.INSTRUMENTED
    (load,) = watch.report()["loads"]
    assert load["loader"] == f"{__name__}.InstrumentingLoader"
    assert "loader_path" not in load  # this test file is outside the worktree


def test_cache_files_this_process_would_load(tmp_path: Path) -> None:
    tag, tail = sys.implementation.cache_tag, integrity.PYTEST_TAIL
    assert integrity.cache_files(os.path.join(tmp_path, "m.py")) == []  # no __pycache__
    caches = tmp_path / "__pycache__"
    caches.mkdir()
    names = [f"m.{tag}.pyc", f"m.{tag}.opt-1.pyc", f"m{tail}", "m.cpython-27.pyc"]
    names += [f"mm.{tag}.pyc", f"m.{tag}.pyc.12345", f"m.{tag}.opt-x.pyc"]
    for name in names:
        (caches / name).write_bytes(b"")
    found = integrity.cache_files(os.path.join(tmp_path, "m.py"))
    expected = [(f"m.{tag}.pyc", "python", -1), (f"m.{tag}.opt-1.pyc", "python", 1)]
    expected.append((f"m{tail}", "pytest", -1))
    assert sorted((Path(p).name, kind, level) for p, kind, level in found) == sorted(expected)


def test_the_code_a_cache_holds_is_compared_not_its_bytes(worktree: Path) -> None:
    """marshal output can differ for equal code (reference flags): equal code objects
    are the same bytecode for Python."""
    source = worktree / "tests/guarded_equal.py"
    source.write_text("X = (1, 2)\n")
    code = compile(source.read_bytes(), str(source), "exec", dont_inherit=True)
    cache = Path(importlib.util.cache_from_source(str(source)))
    cache.parent.mkdir()
    cache.write_bytes(importlib.util.MAGIC_NUMBER + b"\0" * 12 + marshal.dumps(code, 2))
    watch = guard(worktree, "tests/guarded_equal.py")
    importlib.import_module("guarded_equal")
    assert watch.report()["bytecode"] == []
