"""`andgate lock verify` / `andgate lock update`: the fixture lock in the working tree.

Exit codes: 0 match (or written), 1 mismatch; a bad manifest is one line, exit 2.
The lock must stay byte-compatible with `sha256sum`, checked with the real tool
when it is installed.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from andgate.commands.cli import main
from andgate.commands.lock import run_lock_update, run_lock_verify
from andgate.commands.sample import SampleRepo, init_repo

MANIFEST = "tests/trust_manifest.yaml"
FIXTURES = "tests/oracles/fixtures"
LOCK = "tests/oracles/locks.sha256"


def verify(repo: SampleRepo) -> int:
    return run_lock_verify(repo.path, manifest=MANIFEST)


def update(repo: SampleRepo) -> int:
    return run_lock_update(repo.path, manifest=MANIFEST)


def lock_bytes(repo: SampleRepo) -> bytes:
    return (repo.path / LOCK).read_bytes()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_verify_matches_the_sample(sample, capsys):
    assert verify(sample.repo) == 0
    assert f"{LOCK} matches 1 file under {FIXTURES}" in capsys.readouterr().out


def test_verify_lists_added_removed_and_changed_files(sample, capsys):
    sample.repo.write(
        {
            f"{FIXTURES}/new.json": "{}\n",
            f"{FIXTURES}/cases.json": '{"clamp": []}\n',
            f"{LOCK}": lock_bytes(sample.repo) + f"{sha(b'x')}  gone.txt\n".encode(),
        }
    )
    assert main(["lock", "verify", "--repo", str(sample.path)]) == 1
    out = capsys.readouterr().out
    assert f"  added    {FIXTURES}/new.json (not in the lock)" in out
    assert f"  removed  {FIXTURES}/gone.txt (in the lock, no such file)" in out
    assert f"  changed  {FIXTURES}/cases.json (sha256 differs from the lock)" in out
    assert "andgate lock update" in out


def test_verify_reports_a_malformed_or_missing_lock(sample, capsys):
    sample.repo.write({LOCK: lock_bytes(sample.repo) + b"not a lock line\n"})
    assert verify(sample.repo) == 1
    assert f"problem  {LOCK}:2: expected '<sha256>  <path>'" in capsys.readouterr().out
    sample.repo.delete(LOCK)
    assert verify(sample.repo) == 1
    out = capsys.readouterr().out
    assert "lock file is missing; create it with `andgate lock update`" in out
    assert f"added    {FIXTURES}/cases.json" in out


def test_update_is_sorted_deterministic_and_sha256sum_compatible(sample, capsys):
    files = {"b.json": b"2\n", "a/z.txt": b"3", "a b.bin": b"\x00\xff", "cases.json": None}
    sample.repo.write({f"{FIXTURES}/{k}": v for k, v in files.items() if v is not None})
    assert update(sample.repo) == 0
    out = capsys.readouterr().out
    assert f"wrote {LOCK} (4 files under {FIXTURES})" in out
    assert f"added    {FIXTURES}/a b.bin" in out
    digests = {k: sha(v or (sample.path / FIXTURES / k).read_bytes()) for k, v in files.items()}
    assert (
        lock_bytes(sample.repo)
        == (
            f"{digests['a b.bin']}  a b.bin\n{digests['a/z.txt']}  a/z.txt\n"
            f"{digests['b.json']}  b.json\n{digests['cases.json']}  cases.json\n"
        ).encode()
    )
    first = lock_bytes(sample.repo)
    assert update(sample.repo) == 0
    assert "is up to date" in capsys.readouterr().out
    assert lock_bytes(sample.repo) == first
    assert verify(sample.repo) == 0
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum is not installed")
    check = subprocess.run(
        ["sha256sum", "--strict", "-c", str(sample.path / LOCK)],
        cwd=sample.path / FIXTURES,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_update_skips_ignored_files_and_counts_untracked_ones(sample, capsys):
    sample.repo.write(
        {
            ".gitignore": "__pycache__/\n*.pyc\nartifacts/\n*.tmp\n",
            f"{FIXTURES}/scratch.tmp": "ignored\n",
            f"{FIXTURES}/__pycache__/x.pyc": b"\x00",
            f"{FIXTURES}/untracked.json": "[]\n",
        }
    )
    sample.repo.delete(f"{FIXTURES}/cases.json")
    assert update(sample.repo) == 0
    assert lock_bytes(sample.repo) == f"{sha(b'[]' + bytes([10]))}  untracked.json\n".encode()
    assert f"removed  {FIXTURES}/cases.json" in capsys.readouterr().out


def test_update_creates_an_empty_lock_when_there_are_no_fixtures(make_repo, capsys):
    repo = make_repo({MANIFEST: "version: 1\nclasses:\n  oracle:\n    globs: [t/*.py]\n"})
    assert verify(repo) == 0
    assert "matches 0 files" in capsys.readouterr().out
    assert update(repo) == 0
    assert f"created {LOCK} (0 files" in capsys.readouterr().out
    assert lock_bytes(repo) == b""
    assert verify(repo) == 0


@pytest.mark.parametrize(
    "edit, message",
    [
        (("version: 1", "version: 3"), "version must be 1"),
        (
            ("lock_file: tests/oracles/locks.sha256", "lock_file: tests/oracles/fixtures/l"),
            "is inside fixtures_dir",
        ),
    ],
)
@pytest.mark.parametrize("action", ["verify", "update"])
def test_a_bad_manifest_is_one_line_and_exit_2(sample, capsys, edit, message, action):
    sample.repo.edit(MANIFEST, *edit)
    before = lock_bytes(sample.repo)
    assert main(["lock", action, "--repo", str(sample.path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"andgate: {MANIFEST}") and message in err
    assert err.count("\n") == 1
    assert lock_bytes(sample.repo) == before


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z0-9_.-]{1,8}(/[a-z0-9_. -]{1,8})?", fullmatch=True).filter(
            lambda p: not any(part in (".", "..") or part.strip() != part for part in p.split("/"))
        ),
        st.binary(max_size=40),
        max_size=5,
    )
)
def test_update_then_verify_always_matches(tmp_path_factory, files):
    repo = init_repo(tmp_path_factory.mktemp("lock"))
    repo.write({MANIFEST: "version: 1\nclasses:\n  oracle:\n    globs: [t/*.py]\n"})
    folders = {p.split("/")[0] for p in files if "/" in p}
    assume(not folders & set(files))  # a file and a folder cannot share a name
    repo.write({f"{FIXTURES}/{p}": data for p, data in files.items()})
    assert run_lock_update(repo.path, manifest=MANIFEST) == 0
    text = (repo.path / LOCK).read_text()
    assert text.splitlines() == sorted(text.splitlines(), key=lambda line: line[66:])
    assert run_lock_verify(repo.path, manifest=MANIFEST) == 0


@pytest.mark.parametrize("argv", [["lock", "--help"], ["lock", "verify", "--help"]])
def test_help(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "usage: andgate lock" in capsys.readouterr().out


@pytest.mark.parametrize("approved", [False, True])
def test_head_fixture_bytes_against_the_lock_are_a_lock_mismatch(tmp_path, approved):
    """What `check` decides for fixture bytes changed without the lock (git only,
    no pytest process): base's lock, or head's when an owner approved, judges
    head's bytes."""
    from andgate.commands.sample import AGENT
    from andgate.git import Git
    from andgate.trust.locks import lock_facts
    from andgate.trust.manifest import parse_manifest
    from andgate.verdict import lock_findings
    from harness import MANIFEST as MANIFEST_TEXT
    from harness import build_test_sample

    repo, base = build_test_sample(tmp_path / "sample")
    repo.edit("tests/oracles/fixtures/cases.json", "[5, 0, 10, 5]", "[6, 0, 10, 6]")
    head = repo.commit("agent change", who=AGENT)
    manifest = parse_manifest(MANIFEST_TEXT, MANIFEST)
    facts = lock_facts(Git(repo.path), base, head, manifest, approved=approved)
    assert [(f.code.value, f.detail) for f in lock_findings(facts)] == [
        ("LOCK_MISMATCH", "tests/oracles/fixtures/cases.json: sha256 differs from the lock")
    ]
    assert lock_findings(lock_facts(Git(repo.path), base, base, manifest, approved=approved)) == []
