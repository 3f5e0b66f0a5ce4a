"""Test-side integrity during a run (issue 38; contract section 4, step 4), end to end.

Production code runs in the same process and worktree as base's oracles, so it can
change the test side between the first import of the package and the collection of
the next oracle file. Each attack here carries a real production bug that only the
attacked oracle catches, beside a control: the same change without the attack, judged
as before. Every attack blocks PRODUCTION_SUSPICIOUS twice: the production scan names the
line that writes the test side or its caches, or the file that takes a test-side name,
before any test runs (the first line of defence), and the import audit names the file
and the module the trusted run loaded (what no owner's approval lifts).

The checks run with one job: one worktree, reused by every run, and one oracle process
that imports the math oracle (and the package) before the text oracle.
"""

from __future__ import annotations

import pytest

from andgate.commands.sample import SampleRepo
from conftest import Sample
from harness import BASE_FILES, ONE_KNOWN_BAD, build_test_sample

pytestmark = pytest.mark.slow

TEXT_ORACLE = "tests/oracles/test_text_oracle.py"
SLUGIFY = "tests/oracles/test_text_oracle.py::test_slugify_words"


def break_slugify(repo: SampleRepo) -> None:
    """The production bug: separator runs are no longer collapsed... nor spaces."""
    repo.edit("minilib/text.py", '"-", text.lower()', '"_", text.lower()')


def with_production(code: str, where: str = "minilib/text.py"):  # type: ignore[no-untyped-def]
    """A change: the bug, and `code` appended to a production module."""

    def change(repo: SampleRepo) -> None:
        break_slugify(repo)
        path = repo.path / where
        path.write_text(path.read_text() + code)

    return change


# The text oracle, as production code finds it from its own file: the worktree's.
ORACLE_PATH = (
    "import pathlib as _pathlib\n"
    "_ORACLE = _pathlib.Path(__file__).resolve().parents[1] / 'tests' / 'oracles'"
    " / 'test_text_oracle.py'\n"
)

# "Warms the bytecode caches": pytest's rewritten-assert cache for the next oracle file,
# with valid magic, flags and the source hash of the real source, holding its asserts
# neutered (`assert x` becomes `assert True or x`).
PLANT_BYTECODE = (
    ORACLE_PATH
    + """
import importlib.util as _util
import marshal as _marshal
import sys as _sys


def _cache_tail():
    for module in list(_sys.modules.values()):
        tail = getattr(module, "PYC_TAIL", None)
        if isinstance(tail, str):
            return tail
    return None


def _warm_caches():
    tail = _cache_tail()
    if tail is None:
        return
    source = _ORACLE.read_bytes()
    code = compile(source.replace(b"assert ", b"assert True or "), str(_ORACLE), "exec")
    folder = _ORACLE.parent / "__pycache__"
    folder.mkdir(exist_ok=True)
    header = _util.MAGIC_NUMBER + b"\\x03\\x00\\x00\\x00" + _util.source_hash(source)[:8]
    (folder / ("test_text_oracle" + tail)).write_bytes(header + _marshal.dumps(code))
"""
)

REWRITE_SOURCE = (
    ORACLE_PATH
    + """
_ORACLE.write_text(_ORACLE.read_text().replace("assert ", "assert True or "))
"""
)


def scan_found(suspicious: list[str], path: str, construct: str, what: str = "") -> bool:
    """The production scan's finding: `path:line: label (detail) in added code [construct]`
    (or `path: label (detail) [construct]` for a whole file)."""
    return any(d.startswith(f"{path}:") and f"[{construct}]" in d and what in d for d in suspicious)


def planted_for_the_text_oracle(detail: str, run: str = "oracle") -> bool:
    return detail.startswith("tests/oracles/__pycache__/test_text_oracle.") and (
        "bytecode for tests/oracles/test_text_oracle.py (module test_text_oracle) appeared "
        f"during the {run} run and holds code its source does not compile to" in detail
    )


@pytest.fixture
def one_job(sample: Sample):  # type: ignore[no-untyped-def]
    def gate(change):  # type: ignore[no-untyped-def]
        return sample.gate(sample.change(change), jobs=1)

    return gate


@pytest.fixture
def control(one_job):  # type: ignore[no-untyped-def]
    """The bug alone: the text oracle catches it, nothing is suspicious."""
    run = one_job(break_slugify)
    assert run.codes == ["ORACLE_FAILED"]
    assert any(d.startswith(SLUGIFY) for d in run.details("ORACLE_FAILED"))
    return run


def test_the_bug_alone_fails_the_text_oracle(control) -> None:  # type: ignore[no-untyped-def]
    assert "PRODUCTION_SUSPICIOUS" not in control.codes


def test_planted_bytecode_for_the_next_oracle_file_is_never_loaded_and_blocks(one_job) -> None:  # type: ignore[no-untyped-def]
    run = one_job(with_production(PLANT_BYTECODE + "\n_warm_caches()\n"))
    suspicious = run.details("PRODUCTION_SUSPICIOUS")
    assert scan_found(suspicious, "minilib/text.py", "test_side_write", "into a bytecode cache")
    assert scan_found(suspicious, "minilib/text.py", "test_side_write", "forges bytecode caches")
    assert any(planted_for_the_text_oracle(d) for d in suspicious), suspicious
    # the import audit's finding: no approval lifts it
    assert all("an owner reviews it" not in d for d in suspicious if "appeared during" in d)
    assert any(d.endswith("the oracle run's results do not count") for d in suspicious)
    # the oracle ran from its source: the neutered bytecode did not hide the bug
    assert any(d.startswith(SLUGIFY) for d in run.details("ORACLE_FAILED"))
    assert run.payload["bits"]["oracle_ok"] is False


def test_a_rewritten_oracle_source_blocks_naming_the_file_and_module(one_job) -> None:  # type: ignore[no-untyped-def]
    run = one_job(with_production(REWRITE_SOURCE))
    suspicious = run.details("PRODUCTION_SUSPICIOUS")
    what = "under the test side (test_text_oracle.py)"
    assert scan_found(suspicious, "minilib/text.py", "test_side_write", what), suspicious
    assert any(
        d.startswith(f"{TEXT_ORACLE}: the oracle process loaded test_text_oracle from bytes other ")
        and "the test-side file changed during the run" in d
        for d in suspicious
    ), suspicious
    assert run.decision == "block"
    assert run.payload["bits"]["oracle_ok"] is False


def test_xdist_workers_report_what_they_loaded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Under the project's own `-n 2`, each worker is a fresh interpreter that collects
    every oracle file: each is guarded, and the controller gathers their records."""
    files = dict(BASE_FILES)
    files["pytest.ini"] = files["pytest.ini"] + "addopts = -n 2\n"
    repo, base = build_test_sample(tmp_path / "sample", files, known_bad=ONE_KNOWN_BAD)
    sample = Sample(repo, base, tmp_path)
    run = sample.gate(sample.change(with_production(REWRITE_SOURCE)), jobs=1)
    assert any(
        d.startswith(f"{TEXT_ORACLE}: the oracle process loaded test_text_oracle from bytes other ")
        for d in run.details("PRODUCTION_SUSPICIOUS")
    ), run.payload["reasons"]
    control = sample.gate(sample.change(break_slugify), jobs=1)
    assert control.codes == ["ORACLE_FAILED"]


def test_an_owner_approval_does_not_make_a_tampered_run_count(sample: Sample) -> None:
    head = sample.change(with_production(REWRITE_SOURCE))
    run = sample.gate(head, jobs=1, approved_by=("alice",))
    assert run.decision == "block"
    assert any(
        d.startswith(f"{TEXT_ORACLE}: the oracle process loaded test_text_oracle")
        for d in run.details("PRODUCTION_SUSPICIOUS")
    )


# -- worktree reuse: what one run plants for the next -------------------------------------

# When a test calls `mean`, after every oracle file was collected: for the next trusted
# run in this worktree (the known-bad replay, a run of base: the file is the same in
# every tree), plant the text oracle's neutered cache, and neuter the file itself with
# git told not to look at it (`checkout --force` then leaves it as it is).
PLANT_FOR_LATER = (
    PLANT_BYTECODE
    + """
import subprocess as _subprocess


def _for_later():
    _warm_caches()
    text = _ORACLE.read_text()
    _ORACLE.write_text(text.replace("assert chunk(", "assert True or chunk(", 1))
    where = _ORACLE.parents[2]
    _subprocess.run(["git", "update-index", "--skip-worktree", str(_ORACLE)], cwd=where)
"""
)

CALL_FOR_LATER = """

def mean(xs):
    _for_later()
    return sum(xs) / len(xs)
"""


def test_what_a_run_plants_for_the_next_in_its_reused_worktree_is_never_loaded(
    sample: Sample,
) -> None:
    def cheat(repo: SampleRepo) -> None:
        with_production(PLANT_FOR_LATER + CALL_FOR_LATER, "minilib/mathx.py")(repo)

    run = sample.gate(sample.change(cheat), jobs=1)
    suspicious = run.details("PRODUCTION_SUSPICIOUS")
    assert scan_found(suspicious, "minilib/mathx.py", "test_side_write", "--skip-worktree")
    # planted after the oracle process had compiled the file: found at its end
    assert any(planted_for_the_text_oracle(d) for d in suspicious), suspicious
    # the next trusted run's switch found the neutered oracle file, and rebuilt the worktree
    log = (run.artifacts / "logs" / "worktrees.log").read_text()
    assert f"{TEXT_ORACLE} differs" in log
    assert log.rstrip().endswith("rebuilt")
    # the runs after it in the same worktree loaded neither: the replay still bites,
    # and base's runs report nothing
    assert not any("base oracle" in d for d in suspicious)
    assert "ORACLE_NEUTRALIZED" not in run.codes
    assert any(d.startswith(SLUGIFY) for d in run.details("ORACLE_FAILED"))


# -- shadowed test helpers ----------------------------------------------------------------

SCALE = "def scale(x):\n    return x * 2\n"
APPROX = (
    '"""Test helper (owner: alice)."""\n\n\n'
    "def close(a, b):\n    return abs(a - b) <= 1e-9 * max(1.0, abs(b))\n"
)
LAX = '"""Close enough."""\n\n\ndef close(a, b):\n    return abs(a - b) <= 0.25 * abs(b)\n'
SCALE_ORACLE = (
    '"""Human-owned oracle (owner: alice)."""\n\n'
    "from {module} import close\n\nfrom minilib.scale import scale\n\n\n"
    "def test_scale():\n    assert close(scale(10), 20)\n"
)
SCALE_ITEM = "tests/oracles/test_scale_oracle.py::test_scale"


def shadow_sample(tmp_path, *, module: str, pythonpath: bool) -> Sample:  # type: ignore[no-untyped-def]
    files = dict(BASE_FILES)
    files["minilib/scale.py"] = SCALE
    files["tests/support/approx.py"] = APPROX
    files["tests/oracles/test_scale_oracle.py"] = SCALE_ORACLE.format(module=module)
    if pythonpath:
        files["pytest.ini"] = files["pytest.ini"] + "pythonpath = tests\n"
    repo, base = build_test_sample(tmp_path / "sample", files, known_bad=ONE_KNOWN_BAD)
    return Sample(repo, base, tmp_path)


def break_scale(repo: SampleRepo) -> None:
    """10 % off: the exact helper catches it, a 25 % tolerant one does not."""
    repo.edit("minilib/scale.py", "return x * 2", "return x * 2.2")


# A production module file named `tests`, holding a `__path__` into a production folder
# with the tolerant helper: it beats the namespace folder tests/.
MODULE_FILE_SHADOW = {
    "tests.py": (
        '"""Test-suite helpers shipped with the package."""\n\nimport os\n\n'
        '__path__ = [os.path.join(os.path.dirname(__file__), "suite_helpers")]\n'
    ),
    "suite_helpers/support/approx.py": LAX,
}

# A regular package at the root named like the helper folder on `pythonpath = tests`.
PACKAGE_SHADOW = {"support/__init__.py": "", "support/approx.py": LAX}


@pytest.mark.parametrize(
    ("module", "pythonpath", "shadow", "loaded", "name", "scanned"),
    [
        pytest.param(
            "tests.support.approx",
            False,
            MODULE_FILE_SHADOW,
            [("tests.py", "tests"), ("suite_helpers/support/approx.py", "tests.support.approx")],
            "tests",
            # the file under the name, and its `__path__` into the helper's folder
            [("tests.py", "shadowing_module"), ("tests.py:5", "import_machinery")],
            id="module-file",
        ),
        pytest.param(
            "support.approx",
            True,
            PACKAGE_SHADOW,
            [("support/__init__.py", "support"), ("support/approx.py", "support.approx")],
            "support",
            [
                ("support/__init__.py", "shadowing_module"),
                ("support/approx.py", "shadowing_module"),
            ],
            id="regular-package",
        ),
    ],
)
def test_a_production_file_taking_a_test_side_name_blocks(
    tmp_path, module, pythonpath, shadow, loaded, name, scanned
) -> None:  # type: ignore[no-untyped-def]
    sample = shadow_sample(tmp_path, module=module, pythonpath=pythonpath)

    control = sample.gate(sample.change(break_scale), jobs=1)
    assert control.codes == ["ORACLE_FAILED"]
    assert any(d.startswith(SCALE_ITEM) for d in control.details("ORACLE_FAILED"))

    def cheat(repo: SampleRepo) -> None:
        break_scale(repo)
        repo.write(shadow)

    run = sample.gate(sample.change(cheat), jobs=1)
    suspicious = run.details("PRODUCTION_SUSPICIOUS")
    # the scan, before any test ran
    for where, construct in scanned:
        assert any(d.startswith(f"{where}: ") and f"[{construct}]" in d for d in suspicious)
    assert any(f"(takes the test-side name {name} (" in d for d in suspicious)
    for path, module_name in loaded:
        assert any(
            d.startswith(f"{path}: the oracle process loaded {module_name} from this production")
            and f"it takes the test-side name {name} (" in d
            for d in suspicious
        ), suspicious
    # the shadow did reach the oracle (it passed), and its results do not count
    assert not any(d.startswith(SCALE_ITEM) for d in run.details("ORACLE_FAILED"))
    assert run.payload["bits"]["oracle_ok"] is False


# -- snapshot tests: writing into their own folder is no attack ---------------------------

SNAPSHOT_ORACLE = '''"""Human-owned oracle (owner: alice) that keeps a snapshot beside itself."""

from pathlib import Path

from minilib import slugify

SNAPSHOTS = Path(__file__).parent / "__snapshots__"


def test_slugify_snapshot():
    SNAPSHOTS.mkdir(exist_ok=True)
    stored = SNAPSHOTS / "slugify.txt"
    if not stored.exists():
        stored.write_text(slugify("Hello World"))
    assert stored.read_text() == slugify("Hello World") == "hello-world"
'''


def test_oracles_that_write_snapshots_into_their_folder_still_pass(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from stories import honest_fix

    files = dict(BASE_FILES)
    files["tests/oracles/test_snapshot_oracle.py"] = SNAPSHOT_ORACLE
    repo, base = build_test_sample(tmp_path / "sample", files, known_bad=ONE_KNOWN_BAD)
    sample = Sample(repo, base, tmp_path)
    run = sample.gate(sample.change(honest_fix), jobs=1)
    assert run.decision == "allow", run.payload["reasons"]
    assert not (run.artifacts / "logs" / "worktrees.log").exists()
