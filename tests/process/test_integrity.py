"""The gate's judgement of what a trusted run loaded (contract section 4, step 4):
`process.integrity.judge` holds the plugin's records against the tree the run checked
out; `read_results` refuses a trusted run that recorded nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from andgate.git import TreeEntry, blob_id
from andgate.process import integrity
from andgate.process.integrity import ExpectedTestSide, Imported, Load, expected_files, judge
from andgate.process.results import read_results
from andgate.trust import paths

SIDE = paths.TestSide(folders=("tests",))
HELPER = b"def close(a, b):\n    return a == b\n"
ORACLE = b"from tests.support.approx import close\n"


def sha(data: bytes) -> str:
    return blob_id(data, "0" * 40)


def files(**extra: str) -> ExpectedTestSide:
    blobs = {"tests/support/approx.py": sha(HELPER), "tests/test_a.py": sha(ORACLE)}
    return ExpectedTestSide(
        tree="base",
        blobs={**blobs, **extra},
        side=SIDE,
        names={"tests": "tests", "support": "tests/support"},
        base_files=frozenset({"pkg/core.py", "support.py", *blobs}),
    )


def loaded(*loads: Load, **kwargs) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    return judge("oracle", Imported(loads=loads, **kwargs), files())


def test_modules_compiled_from_the_tree_s_bytes_are_no_finding() -> None:
    assert (
        loaded(
            Load("tests.support.approx", "tests/support/approx.py", sha(HELPER)),
            Load("test_a", "tests/test_a.py", sha(ORACLE)),
            Load("pkg.core", "pkg/core.py", sha(b"anything: production is head's")),
        )
        == ()
    )


def test_a_test_side_file_that_changed_during_the_run_names_file_and_module() -> None:
    found = loaded(Load("tests.support.approx", "tests/support/approx.py", sha(b"lax")))
    assert found == (
        f"tests/support/approx.py: the oracle process loaded tests.support.approx from bytes "
        f"other than base's (blob {sha(b'lax')[:12]}, base's {sha(HELPER)[:12]}): the "
        "test-side file changed during the run",
    )


def test_line_ends_a_checkout_converted_are_the_same_bytes() -> None:
    crlf = HELPER.replace(b"\n", b"\r\n")
    load = Load("tests.support.approx", "tests/support/approx.py", sha(crlf), sha(HELPER))
    assert loaded(load) == ()


def test_a_module_read_through_a_symlinked_folder_is_the_file_it_leads_to() -> None:
    shared = Load("helpers", "tests/shared/helpers.py", sha(HELPER), real="tests/support/approx.py")
    assert loaded(shared) == ()
    elsewhere = Load(
        "helpers", "tests/shared/helpers.py", sha(b"x"), real="tests/support/approx.py"
    )
    assert "from bytes other than base's" in loaded(elsewhere)[0]


def test_a_test_side_module_the_tree_does_not_have_was_written_during_the_run() -> None:
    (found,) = loaded(Load("tests.support.extra", "tests/support/extra.py", sha(b"x")))
    assert found.startswith("tests/support/extra.py: the oracle process loaded tests.support")
    assert "from a test-side file base does not have: it was written during the run" in found


@pytest.mark.parametrize(
    ("module", "path"),
    [("tests", "tests.py"), ("support.approx", "support/approx.py"), ("support", "support.pyc")],
)
def test_a_production_file_new_with_the_change_under_a_test_side_name(module, path) -> None:  # type: ignore[no-untyped-def]
    (found,) = loaded(Load(module, path, sha(b"shadow")))
    name = module.partition(".")[0]
    provider = "tests" if name == "tests" else "tests/support"
    assert found == (
        f"{path}: the oracle process loaded {module} from this production file; it takes the "
        f"test-side name {name} ({provider} on base's test side)"
    )


def test_a_name_base_s_own_production_file_already_took_is_not_the_change_s() -> None:
    assert loaded(Load("support", "support.py", sha(b"base's own"))) == ()


def test_modules_not_compiled_from_source_on_the_test_side_or_under_its_names() -> None:
    extension = "as a compiled extension"
    found = judge(
        "oracle 2",
        Imported(
            unverified=(
                ("helper", "tests/helper.abi3.so", extension),
                ("support", "support.so", extension),
                ("pkg.fast", "pkg/fast.so", extension),  # production: the scan's business
            )
        ),
        files(),
    )
    assert found == (
        "tests/helper.abi3.so: the oracle 2 process loaded helper as a compiled extension, "
        "not compiled from base's source",
        "support.so: the oracle 2 process loaded support as a compiled extension; it takes "
        "the test-side name support (tests/support on base's test side)",
    )


def test_a_loader_from_production_code_compiling_test_side_bytes() -> None:
    hook = {"loader": "pkg.hook.Loader", "loader_path": "pkg/hook.py"}
    load = Load("test_a", "tests/test_a.py", sha(ORACLE), **hook)
    (found,) = loaded(load)
    assert "compiled by the loader pkg.hook.Loader of the production file pkg/hook.py" in found
    test_side_hook = Load(
        "test_a", "tests/test_a.py", sha(ORACLE), loader="x.Loader", loader_path="tests/hook.py"
    )
    assert loaded(test_side_hook) == ()


def test_bytecode_that_appeared_during_the_run() -> None:
    cache = "tests/__pycache__/test_a.cpython-311-pytest-9.0.pyc"
    bytecode = ((cache, "tests/test_a.py", "test_a", "holds code its source does not compile to"),)
    assert loaded(bytecode=bytecode) == (
        f"{cache}: bytecode for tests/test_a.py (module test_a) appeared during the oracle run "
        "and holds code its source does not compile to",
    )


def test_records_read_from_the_results_file() -> None:
    data = {
        "loads": [
            {"module": "m", "path": "m.py", "blob": "1", "how": "compiled"},
            {"module": "t", "path": "t.py", "blob": "2", "blob_lf": "3", "loader": "L"},
        ],
        "unverified": [{"module": "u", "path": "u.so", "why": "as a compiled extension"}],
        "bytecode": [{"path": "c.pyc", "source": "t.py", "module": "t", "why": "w"}],
    }
    imported = Imported.from_json(data)
    assert imported.loads == (Load("m", "m.py", "1"), Load("t", "t.py", "2", "3", loader="L"))
    assert imported.unverified == (("u", "u.so", "as a compiled extension"),)
    assert imported.bytecode == (("c.pyc", "t.py", "t", "w"),)


def test_a_known_bad_fixture_that_rewrites_a_test_side_file(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_a.py").write_bytes(b"patched\n")
    after = files().patched(tmp_path, ["tests/test_a.py", "tests/support/approx.py", "x.txt"])
    assert after.blobs["tests/test_a.py"] == sha(b"patched\n")
    assert "tests/support/approx.py" not in after.blobs  # the fixture deleted it
    assert "x.txt" not in after.blobs


class LinkGit:
    """The few blobs `expected_files` reads: the links' targets."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs

    def read_blobs(self, shas) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
        return {s: self.blobs[s] for s in shas if s in self.blobs}


def test_expected_files_are_the_test_side_python_files_links_followed() -> None:
    listing = {
        "tests/test_a.py": TreeEntry("100644", "blob", "a" * 40, "tests/test_a.py"),
        "tests/data.json": TreeEntry("100644", "blob", "b" * 40, "tests/data.json"),
        "pkg/core.py": TreeEntry("100644", "blob", "c" * 40, "pkg/core.py"),
        "tests/link.py": TreeEntry("120000", "blob", "d" * 40, "tests/link.py"),
        "tests/out.py": TreeEntry("120000", "blob", "e" * 40, "tests/out.py"),
    }
    git = LinkGit({"d" * 40: b"../pkg/core.py", "e" * 40: b"../../elsewhere.py"})
    found = expected_files(git, "base", listing, SIDE, {}, frozenset())  # type: ignore[arg-type]
    assert found.blobs == {
        "tests/test_a.py": "a" * 40,
        "tests/link.py": "c" * 40,  # Python reads the file the link leads to
        "pkg/core.py": "c" * 40,  # what a link may lead to; not watched
    }
    assert found.algorithm == "sha1"
    assert found.spec() == {"algorithm": "sha1", "test_files": ["tests/link.py", "tests/test_a.py"]}


def test_a_sha256_repository_s_ids() -> None:
    listing = {"tests/test_a.py": TreeEntry("100644", "blob", "a" * 64, "tests/test_a.py")}
    found = expected_files(LinkGit({}), "base", listing, SIDE, {}, frozenset())  # type: ignore[arg-type]
    assert found.algorithm == "sha256"


def results_file(tmp_path: Path, imported: object) -> Path:
    payload = {
        "schema": "andgate.results/1",
        "items": [],
        "reports": {},
        "seeds": {},
        "collection_errors": [],
        "integrity": imported,
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_a_trusted_run_is_judged_when_its_results_are_read(tmp_path: Path) -> None:
    report = {"loads": [{"module": "t", "path": "tests/test_a.py", "blob": sha(b"x")}]}
    path = results_file(tmp_path, report)
    result = read_results("oracle", 0, 1.0, path, tmp_path / "log", None, expected=files())
    assert result.error is None
    assert [t.partition(":")[0] for t in result.tampered] == ["tests/test_a.py"]
    untrusted = read_results("untrusted", 0, 1.0, path, tmp_path / "log", None)
    assert untrusted.tampered == ()


def test_a_trusted_run_that_recorded_nothing_is_an_error(tmp_path: Path) -> None:
    path = results_file(tmp_path, None)
    result = read_results("oracle", 0, 1.0, path, tmp_path / "log", None, expected=files())
    assert result.error == (
        "the oracle pytest process did not report what it compiled from its worktree, so its "
        "test side is unverified"
    )


def test_the_module_keeps_its_public_names() -> None:
    assert integrity.SYMLINK_MODE == "120000"
