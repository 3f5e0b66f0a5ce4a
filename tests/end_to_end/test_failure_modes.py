"""Bad input, row by row: every row of docs/failure-modes.md has a test here.

A merge gate's one unforgivable bug is an allow it should not have given. Each
test feeds `andgate check` (or the parser behind it) one bad input and asserts
the contract's answer: a block (exit 1, or 2 when MANIFEST_INVALID or
GATE_ERROR is among the reasons), the right reason code, a message of one line
naming the file, the field and the fix, and never a traceback.

Most rows run end to end through `andgate.commands.cli.main` on a tiny project (one
production module, one oracle test) built as a throwaway git repository; the
parsers also get direct tests where one input has many bad variants (the manifest's
variants are refused by its parser, `refused`, exactly as check reads base's blob;
a few manifest rows still run end to end for the wiring). Rows that
share one gate run (the known-bad fixtures) use a module-scoped run under the
same isolation as conftest's `isolated_environment`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from andgate.check.pipeline import CheckOptions, run_check
from andgate.commands.cli import main
from andgate.commands.sample import AGENT, SampleRepo, init_repo
from andgate.errors import ManifestError
from andgate.plugin.classify import accepted_invariants
from andgate.records import LockFacts
from andgate.trust.config import BaseConfig
from andgate.trust.freeze import FreezeSet, parse_freezes
from andgate.trust.locks import compare, parse_lock
from andgate.trust.manifest import parse_manifest

# End to end: these start the gate's pytest processes.
pytestmark = pytest.mark.slow

TODAY = "2026-11-25"
MANIFEST_PATH = "tests/trust_manifest.yaml"
MANIFEST = """\
version: 1
classes:
  oracle:
    require_human_owner: true
    globs: ["tests/oracles/**/*.py"]
    markers: []
  property:
    globs: ["tests/properties/**/*.py"]
  frozen_flake:
    freeze_file: tests/flakes/freeze.yaml
    globs: ["tests/**/*.py"]
owners: [alice]
require_property_class: false
oracle_must_fail_known_bad: false
"""
CORE = "def add(a, b):\n    return a + b\n"
ORACLE = "from pkg.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FLAKY = "def test_flaky():\n    assert False, 'depends on runner load'\n"
TINY: dict[str, str | bytes] = {
    ".gitignore": "__pycache__/\nartifacts/\n",
    "pkg/__init__.py": "",
    "pkg/core.py": CORE,
    MANIFEST_PATH: MANIFEST,
    "tests/oracles/test_core.py": ORACLE,
}
# A real known-bad fixture for pkg/core.py: the oracle fails under it.
KB_SUBTRACTS = """\
diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a + b
+    return a - b
"""


# -- helpers -------------------------------------------------------------------------


def build(path: Path, files: dict[str, str | bytes] | None = None, drop: tuple[str, ...] = ()):
    """The tiny project, with `files` added or replaced and `drop` removed, as base."""
    repo = init_repo(path)
    tree = {**TINY, **(files or {})}
    repo.write({k: v for k, v in tree.items() if k not in drop})
    return repo, repo.commit("base (owner: alice)")


def agent_change(repo: SampleRepo, files: dict[str, str | bytes] | None = None) -> str:
    """An honest production change on top of whatever is checked out."""
    repo.write(files or {"pkg/extra.py": "EXTRA = 1\n"})
    return repo.commit("agent change", who=AGENT)


@dataclass
class Gate:
    """One `andgate check --json` through the CLI: exit code, payload, streams."""

    exit_code: int
    payload: dict[str, Any]
    out: str
    err: str
    artifacts: Path

    @property
    def codes(self) -> list[str]:
        return [r["code"] for r in self.payload["reasons"]]

    def details(self, code: str) -> list[str]:
        return [r["detail"] for r in self.payload["reasons"] if r["code"] == code]


@pytest.fixture
def tiny(tmp_path: Path) -> Callable[..., tuple[SampleRepo, str]]:
    counter = iter(range(100))
    return lambda files=None, drop=(): build(tmp_path / f"tiny{next(counter)}", files, drop)


@pytest.fixture
def gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., Gate]:
    def run(repo: Path | SampleRepo, base: str | None, head: str = "HEAD", *extra: str) -> Gate:
        path = repo.path if isinstance(repo, SampleRepo) else repo
        artifacts = tmp_path / "artifacts"
        argv = ["check", "--repo", str(path), "--head", head, "--today", TODAY]
        argv += ["--artifacts", str(artifacts), "--jobs", "2", "--json", *extra]
        if base is not None:
            argv += ["--base", base]
        code = main(argv)
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        payload = json.loads(out) if out.strip() else {}
        if payload:
            on_disk = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
            assert on_disk == payload
            assert (artifacts / "summary.md").read_text(encoding="utf-8").startswith("# andgate")
        return Gate(code, payload, out, err, artifacts)

    return run


def blocked(run: Gate, code: str, *fragments: str, exit_code: int | None = None) -> str:
    """Assert a block with `code` whose one-line detail holds every fragment."""
    assert run.payload["verdict"] == "block", run.payload
    could_not_run = {"MANIFEST_INVALID", "GATE_ERROR"} & set(run.codes)
    assert run.exit_code == (exit_code or (2 if could_not_run else 1))
    matching = [d for d in run.details(code) if all(f in d for f in fragments)]
    assert matching, (code, fragments, run.payload["reasons"])
    assert "\n" not in matching[0]
    assert not (run.artifacts / "logs" / "gate_error.log").exists(), "an internal error"
    return matching[0]


@contextlib.contextmanager
def isolated(tmp: Path) -> Iterator[None]:
    """conftest's isolated_environment, for module-scoped gate runs."""
    with pytest.MonkeyPatch.context() as mp:
        for var in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            mp.setenv(var, str(tmp / "home"))
        mp.delenv("ANDGATE_APPROVED_BY", raising=False)
        for name in [n for n in os.environ if n.startswith("GIT_")]:
            mp.delenv(name)
        yield


def gate_once(repo: SampleRepo, base: str, head: str, artifacts: Path) -> dict[str, Any]:
    opts = CheckOptions(
        repo=repo.path,
        base=base,
        head=head,
        today=dt.date.fromisoformat(TODAY),
        artifacts=artifacts,
        jobs=2,
        timeout=300,
    )
    verdict, written = run_check(opts)
    payload = json.loads((written.folder / "verdict.json").read_text(encoding="utf-8"))
    assert verdict.exit_code in (1, 2)
    return payload


def details(payload: dict[str, Any], code: str) -> list[str]:
    return [r["detail"] for r in payload["reasons"] if r["code"] == code]


def refused(text: str | bytes, *fragments: str) -> str:
    """The manifest parser's refusal, as check reads the blob from base: one line
    naming the file, the field and the fix (check turns it into MANIFEST_INVALID,
    exit 2; test_manifest_missing and the terminal test below run that end to end)."""
    blob = text.encode("utf-8") if isinstance(text, str) else text
    with pytest.raises(ManifestError) as refusal:
        parse_manifest(blob, MANIFEST_PATH, f"{MANIFEST_PATH} (at 0123456789ab)")
    message = str(refusal.value)
    assert "\n" not in message
    assert all(f in message for f in fragments), (fragments, message)
    return message


# == 1. The manifest ===================================================================


def with_manifest(text: str | bytes) -> dict[str, str | bytes]:
    return {MANIFEST_PATH: text}


def test_manifest_missing(tiny, gate):
    repo, base = tiny(drop=(MANIFEST_PATH,))
    run = gate(repo, base, agent_change(repo))
    blocked(run, "MANIFEST_INVALID", MANIFEST_PATH, "manifest not found", "andgate init")
    assert run.payload["bits"] == dict.fromkeys(run.payload["bits"], False)


def test_manifest_path_given_with_manifest_is_read_from_base(tiny, gate):
    repo, base = tiny()
    run = gate(repo, base, agent_change(repo), "--manifest", "ci/gate.yaml")
    blocked(run, "MANIFEST_INVALID", "ci/gate.yaml", "not found", "--manifest PATH")


@pytest.mark.parametrize(
    "text",
    ["", "\n\n", "# only a comment\n", "---\n", "~\n"],
    ids=["zero-bytes", "blank-lines", "comment", "bare-document", "null"],
)
def test_manifest_empty(text):
    refused(text, MANIFEST_PATH, "manifest is empty", "version and classes")


@pytest.mark.parametrize(
    "text", ["- version: 1\n", "just a string\n", "42\n"], ids=["list", "string", "number"]
)
def test_manifest_not_a_mapping(text):
    refused(text, MANIFEST_PATH, "the manifest must be a mapping")


@pytest.mark.parametrize(
    ("edit", "key", "where", "hint"),
    [
        (
            ("require_property_class: false", "require_propery_class: false"),
            "require_propery_class",
            "",
            "did you mean 'require_property_class'?",
        ),
        (("  oracle:\n", "  oracel:\n"), "oracel", " under classes", "did you mean 'oracle'?"),
        (
            ("    markers: []\n", "    markers: []\n    marker: [x]\n"),
            "marker",
            " under classes.oracle",
            "did you mean 'markers'?",
        ),
        (
            (
                '    globs: ["tests/properties/**/*.py"]\n',
                '    globs: ["tests/properties/**/*.py"]\n    invariant_file: X.md\n',
            ),
            "invariant_file",
            " under classes.property",
            "did you mean 'invariants_file'?",
        ),
        (
            (
                '    globs: ["tests/**/*.py"]\n',
                '    globs: ["tests/**/*.py"]\n    expiry_days: 3\n',
            ),
            "expiry_days",
            " under classes.frozen_flake",
            "allowed keys: freeze_file, globs",
        ),
    ],
    ids=["top", "classes", "classes.oracle", "classes.property", "classes.frozen_flake"],
)
def test_manifest_unknown_key_at_any_level(edit, key, where, hint):
    text = MANIFEST.replace(*edit)
    refused(text, MANIFEST_PATH, f"unknown key {key!r}{where}", hint)


@pytest.mark.parametrize(
    ("edit", "field", "fix"),
    [
        (
            ('globs: ["tests/oracles/**/*.py"]', 'globs: "tests/oracles/**/*.py"'),
            "classes.oracle.globs",
            "must be a list of non-empty strings",
        ),
        (("owners: [alice]", "owners: alice"), "owners", "must be a list of non-empty strings"),
        (("markers: []", "markers: [oracle, 3]"), "classes.oracle.markers", "must be a list"),
        (
            ("require_human_owner: true", "require_human_owner: 1"),
            "classes.oracle.require_human_owner",
            "must be true or false, got 1",
        ),
        (
            ("require_property_class: false", "require_property_class: 'false'"),
            "require_property_class",
            "must be true or false, got 'false'",
        ),
        (
            ("owners: [alice]", "owners: [alice]\nmax_freeze_days: true"),
            "max_freeze_days",
            "must be a whole number >= 1, got True",
        ),
        (
            ("owners: [alice]", "owners: [alice]\nmax_freeze_days: 0"),
            "max_freeze_days",
            "must be a whole number >= 1, got 0",
        ),
        (
            ("owners: [alice]", "owners: [alice]\nmax_freeze_days: 7.5"),
            "max_freeze_days",
            "must be a whole number >= 1, got 7.5",
        ),
        (
            ("owners: [alice]", "owners: [alice]\nknown_bad_dir: ../elsewhere"),
            "known_bad_dir",
            "must be a relative path inside the repository",
        ),
        (
            ("owners: [alice]", "owners: [alice]\nlock_file: /etc/locks"),
            "lock_file",
            "must be a relative path inside the repository",
        ),
        (
            ('globs: ["tests/oracles/**/*.py"]', 'globs: ["../**/*.py"]'),
            "classes.oracle.globs",
            "must be relative to the repository root",
        ),
        (
            ("owners: [alice]", "owners: [alice]\nlock_file: tests/oracles/fixtures/l.sha256"),
            "lock_file 'tests/oracles/fixtures/l.sha256' is inside fixtures_dir",
            "move the lock file out of the folder it locks",
        ),
    ],
    ids=[
        "glob-string",
        "owners-string",
        "marker-int",
        "bool-as-int",
        "bool-as-string",
        "days-as-bool",
        "days-zero",
        "days-float",
        "dir-outside",
        "abs-path",
        "glob-outside",
        "lock-in-fixtures",
    ],
)
def test_manifest_wrong_type(edit, field, fix):
    text = MANIFEST.replace(*edit)
    assert text != MANIFEST
    refused(text, MANIFEST_PATH, field, fix)


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("", None),
        ("version: 2\n", "2"),
        ('version: "1"\n', "'1'"),
        ("version: 1.0\n", "1.0"),
        ("version: true\n", "True"),
    ],
    ids=["missing", "2", "string", "float", "bool"],
)
def test_manifest_version_missing_or_not_1(line, shown):
    text = MANIFEST.replace("version: 1\n", line)
    if shown is None:
        refused(text, MANIFEST_PATH, "required key 'version' is missing")
    else:
        refused(text, MANIFEST_PATH, "version must be 1", f"got {shown}")


@pytest.mark.parametrize("globs", ["[]", "null", "['  ']"], ids=["empty", "null", "blank"])
def test_manifest_oracle_glob_list_empty(globs):
    text = MANIFEST.replace('globs: ["tests/oracles/**/*.py"]', f"globs: {globs}")
    refused(text, MANIFEST_PATH, "classes.oracle.globs")


def test_manifest_classes_not_a_mapping():
    text = "version: 1\nclasses: [oracle]\n"
    refused(text, MANIFEST_PATH, "classes must be a mapping")


def test_manifest_oracle_globs_missing():
    text = MANIFEST.replace('    globs: ["tests/oracles/**/*.py"]\n', "")
    refused(text, "required key 'globs' is missing under classes.oracle")


BILLION_LAUGHS = 'l0: &l0 "lol"\n' + "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10)
)


@pytest.mark.parametrize(
    "text",
    [
        BILLION_LAUGHS,
        MANIFEST + "extra: &globs [a]\nmore: *globs\n",
        "base: &b {version: 1}\n<<: *b\n",
    ],
    ids=["billion-laughs", "alias", "merge-key"],
)
def test_manifest_yaml_alias_bomb(text):
    refused(text, MANIFEST_PATH, "invalid YAML (line ", "aliases")


def test_manifest_yaml_anchor_without_alias_is_harmless():
    text = MANIFEST.replace("owners: [alice]", "owners: &owners [alice]")
    assert parse_manifest(text, MANIFEST_PATH) == parse_manifest(MANIFEST, MANIFEST_PATH)


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        (MANIFEST + "version: 1\n", "version", 15),
        (MANIFEST.replace("    markers: []\n", "    markers: []\n    globs: []\n"), "globs", 7),
    ],
    ids=["top", "nested"],
)
def test_manifest_duplicate_keys(text, key, line):
    refused(text, MANIFEST_PATH, f"(line {line})", f"duplicate key {key!r}")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("version: 1\nclasses:\n\toracle: {}\n", "found character '\\t'"),
        ("version: [1\n", "expected ',' or ']'"),
        (MANIFEST + "---\nversion: 1\n", "expected a single document"),
        ("version: !!python/object/apply:os.system [echo]\n", "could not determine a constructor"),
        ("version: !!int one\n", "invalid literal for int()"),
        ("version: " + "[" * 2000 + "]" * 2000 + "\n", "nested too deeply"),
        (b"version: 1\n# caf\xe9\n", "not UTF-8 text"),
    ],
    ids=["tab", "unclosed", "two-documents", "python-tag", "bad-int-tag", "deep", "latin-1"],
)
def test_manifest_not_yaml(text, says):
    refused(text, MANIFEST_PATH, says)


def test_manifest_symlink_is_not_followed(tiny, gate):
    repo, base = tiny(drop=(MANIFEST_PATH,))
    repo.write({"real.yaml": MANIFEST})
    os.symlink("../real.yaml", repo.path / MANIFEST_PATH)
    base = repo.commit("manifest as a link")
    run = gate(repo, base, agent_change(repo))
    blocked(run, "MANIFEST_INVALID", MANIFEST_PATH, "must be a mapping")


def windows(text: str) -> str:
    """As a Windows editor may save it: a UTF-8 byte-order mark and CRLF line endings."""
    return "\ufeff" + text.replace("\n", "\r\n")


@pytest.mark.parametrize(
    "transform",
    [lambda t: t.replace("\n", "\r\n"), lambda t: "\ufeff" + t, windows],
    ids=["crlf", "utf-8-bom", "both"],
)
def test_manifest_crlf_and_bom_parse_the_same(transform):
    text = transform(MANIFEST).encode("utf-8")
    assert parse_manifest(text, MANIFEST_PATH) == parse_manifest(MANIFEST, MANIFEST_PATH)


def test_manifest_crlf_and_bom_gate_the_same(tiny, gate):
    repo, base = tiny(with_manifest(windows(MANIFEST).encode("utf-8")))
    assert b"\r\n" in repo.git.read_blob(base, MANIFEST_PATH)
    run = gate(repo, base, agent_change(repo))
    assert run.payload["verdict"] == "allow", run.payload["reasons"]
    assert run.payload["counts"]["oracle"] == 1


# == 2. The freeze file ================================================================


def freeze_entry(**fields: str | None) -> str:
    entry = {
        "id": '"test_flaky"',
        "reason": '"depends on runner load"',
        "first_seen": '"2026-11-20"',
        "expires": '"2026-12-10"',
        "owner": '"platform-tests"',
        **fields,
    }
    lines = [f"{key}: {value}" for key, value in entry.items() if value is not None]
    return "  - " + "\n    ".join(lines) + "\n"


def freezes(*entries: str) -> str:
    return "freezes:\n" + "".join(entries)


def parse(text: str | bytes) -> tuple[list[str], list[str]]:
    found = parse_freezes(text, "freeze.yaml", 28)
    return [f.id for f in found.valid], [p.message for p in found.invalid]


@pytest.mark.parametrize("field", ["id", "reason", "first_seen", "expires", "owner"])
def test_freeze_missing_field(field):
    valid, invalid = parse(freezes(freeze_entry(**{field: None})))
    assert valid == []
    assert len(invalid) == 1 and "freezes[0]" in invalid[0] and field in invalid[0]
    assert "missing" in invalid[0] and "add" in invalid[0]


@pytest.mark.parametrize("field", ["id", "reason", "owner"])
@pytest.mark.parametrize("value", ['""', '"   "', "42", "[a]", "{a: 1}", "null"])
def test_freeze_text_field_of_wrong_type(field, value):
    valid, invalid = parse(freezes(freeze_entry(**{field: value})))
    assert valid == [] and len(invalid) == 1
    assert f"{field} is missing or empty; add a non-empty string" in invalid[0]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ('"2026-13-01"', "'2026-13-01'"),
        ("2026-13-01", "'2026-13-01'"),
        ("2026-02-30", "'2026-02-30'"),
        ('"2026-1-5"', "'2026-1-5'"),
        ('"01/12/2026"', "'01/12/2026'"),
        ('"next week"', "'next week'"),
        ("20261201", "20261201"),
        ('"20261201"', "'20261201'"),
        ("2026-12-01 10:00:00", "'2026-12-01 10:00:00'"),
        ("2026-12-01T10:00:00Z", "'2026-12-01 10:00:00+00:00'"),
        ("yes", "True"),
        ('"\uff12\uff10\uff12\uff16-12-01"', "'\uff12\uff10\uff12\uff16-12-01'"),
    ],
    ids=[
        "month-13-quoted",
        "month-13-unquoted",
        "feb-30",
        "no-padding",
        "slashes",
        "words",
        "integer",
        "basic-iso-format",
        "datetime",
        "datetime-tz",
        "bool",
        "fullwidth-digits",
    ],
)
def test_freeze_bad_dates(value, shown):
    valid, invalid = parse(freezes(freeze_entry(expires=value)))
    assert valid == []
    assert invalid == [
        f"freeze.yaml: freezes[0] (id 'test_flaky'): expires {shown} is not a date; "
        "write it as YYYY-MM-DD"
    ]


def test_freeze_dates_as_yaml_dates_or_strings_are_the_same():
    quoted = parse_freezes(freezes(freeze_entry()), "f", 28)
    unquoted = parse_freezes(
        freezes(freeze_entry(first_seen="2026-11-20", expires="2026-12-10")), "f", 28
    )
    assert quoted.invalid == unquoted.invalid == ()
    assert quoted.valid == unquoted.valid
    assert quoted.valid[0].expires == dt.date(2026, 12, 10)


def test_freeze_crlf_line_endings_parse_the_same():
    text = freezes(freeze_entry(), freeze_entry(id='"other"'))
    assert parse_freezes(text.replace("\n", "\r\n"), "f", 28) == parse_freezes(text, "f", 28)


@pytest.mark.parametrize(
    "second", ['"test_flaky"', '"test_flaky  "'], ids=["same", "same-after-strip"]
)
def test_freeze_duplicate_ids(second):
    valid, invalid = parse(freezes(freeze_entry(), freeze_entry(id=second)))
    assert valid == []
    assert len(invalid) == 2
    assert all("duplicate id; each test may be frozen by one entry only" in m for m in invalid)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- a\n", "must be a mapping with a 'freezes' list"),
        ("freezes: {id: x}\n", "'freezes' must be a list of entries"),
        ("freeze:\n" + freeze_entry(), "unknown key 'freeze'; only 'freezes' is allowed"),
        (freezes(freeze_entry(owner='"a"\n    owner: "b"')), "duplicate key 'owner'"),
        (freezes(freeze_entry(reason="&r x"), freeze_entry(id='"b"', reason="*r")), "aliases"),
        ("freezes: [\n", "invalid YAML"),
        (b"freezes:\n  - id: caf\xe9\n", "not UTF-8 text"),
    ],
    ids=[
        "list",
        "freezes-mapping",
        "unknown-top-key",
        "duplicate-key",
        "alias",
        "syntax",
        "latin-1",
    ],
)
def test_freeze_file_unreadable_as_a_whole(text, says):
    valid, invalid = parse(text)
    assert valid == [] and len(invalid) == 1
    assert invalid[0].startswith("freeze.yaml") and says in invalid[0]


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"expires": '"2027-01-30"'}, "freeze lasts 71 days, over max_freeze_days (28)"),
        ({"expires": '"2026-11-01"'}, "expires is before first_seen"),
        ({"ticket": '"T-1"'}, "unknown key 'ticket'; allowed keys: id, reason"),
    ],
    ids=["too-long", "backwards", "unknown-key"],
)
def test_freeze_entry_invalid(fields, says):
    valid, invalid = parse(freezes(freeze_entry(**fields)))
    assert valid == [] and len(invalid) == 1 and says in invalid[0]


def test_freeze_problems_block_end_to_end(tiny, gate):
    """Every invalid entry is reported on its own line; the test it meant to
    freeze stays untrusted, so its failure blocks too."""
    text = freezes(
        freeze_entry(expires="2026-13-01"),
        freeze_entry(id='"dup"'),
        freeze_entry(id='"dup"'),
        freeze_entry(id='"no_owner"', owner=None),
    )
    repo, base = tiny({"tests/flakes/freeze.yaml": text, "tests/test_flaky.py": FLAKY})
    run = gate(repo, base, agent_change(repo))
    blocked(run, "FREEZE_INVALID", "tests/flakes/freeze.yaml", "freezes[0]", "'2026-13-01'")
    blocked(run, "FREEZE_INVALID", "freezes[1] (id 'dup'): duplicate id")
    blocked(run, "FREEZE_INVALID", "freezes[3] (id 'no_owner'): owner is missing")
    blocked(run, "UNTRUSTED_FAILED", "tests/test_flaky.py::test_flaky")
    assert run.payload["counts"]["frozen_flake"] == 0


def test_freeze_file_broken_as_a_whole_blocks_end_to_end(tiny, gate):
    text = freezes(freeze_entry()) + "  - id: &x a\n    reason: *x\n"
    repo, base = tiny({"tests/flakes/freeze.yaml": text, "tests/test_flaky.py": FLAKY})
    run = gate(repo, base, agent_change(repo))
    blocked(run, "FREEZE_INVALID", "tests/flakes/freeze.yaml", "invalid YAML", "aliases")


def test_freeze_unquoted_dates_and_crlf_freeze_end_to_end(tiny, gate):
    """Unquoted (YAML date) spellings and CRLF line endings, as a Windows
    editor saves them: the freeze holds exactly as the quoted one does."""
    text = freezes(freeze_entry(first_seen="2026-11-20", expires="2026-12-10"))
    repo, base = tiny(
        {"tests/flakes/freeze.yaml": text.replace("\n", "\r\n"), "tests/test_flaky.py": FLAKY}
    )
    run = gate(repo, base, agent_change(repo))
    assert run.payload["verdict"] == "allow", run.payload["reasons"]
    assert run.payload["counts"] == {
        "oracle": 1,
        "property": 0,
        "frozen_flake": 1,
        "untrusted": 0,
    }


def test_freeze_file_missing_freezes_nothing():
    found = parse_freezes(None, "tests/flakes/freeze.yaml", 28)
    assert found.valid == () and found.invalid == ()
    assert found.live(dt.date.fromisoformat(TODAY)) == ()


# == 3. The invariants file ===========================================================

PROPERTY_FILE = (
    "import pytest\n\n# INVARIANT: add is commutative\n\n\n"
    "@pytest.mark.parametrize('seed', [1, 2])\n"
    "def test_commutes(seed):\n    assert seed + 1 == 1 + seed\n"
)
STRICT_PROPERTY = MANIFEST.replace("require_property_class: false\n", "")


@pytest.mark.parametrize(
    ("invariants", "says"),
    [
        (
            None,
            "tests/properties/INVARIANTS.md (at {base}) is missing; add it with one "
            "'- <invariant>' line",
        ),
        (
            "",
            "tests/properties/INVARIANTS.md (at {base}) lists no invariant; add one "
            "'- <invariant>' line",
        ),
    ],
    ids=["missing", "empty"],
)
def test_invariants_missing_or_empty(tiny, gate, invariants, says):
    files: dict[str, str | bytes] = {
        MANIFEST_PATH: STRICT_PROPERTY,
        "tests/properties/test_add_property.py": PROPERTY_FILE,
    }
    if invariants is not None:
        files["tests/properties/INVARIANTS.md"] = invariants
    repo, base = tiny(files)
    run = gate(repo, base, agent_change(repo))
    blocked(run, "NO_PROPERTY", "the property class is empty", says.format(base=base[:12]))
    # The property file was collected, but only as untrusted: it proves nothing.
    assert run.payload["counts"]["property"] == 0
    assert run.payload["counts"]["untrusted"] == 2


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# Accepted invariants\n\nadd is commutative\n", "lists no invariant"),
        ("# Accepted invariants\n\n- add is commutative\n", None),
    ],
    ids=["no-bullet", "bullet"],
)
def test_invariants_without_a_bullet_accept_nothing(text, problem):
    config = BaseConfig(
        manifest=parse_manifest(STRICT_PROPERTY, MANIFEST_PATH),
        freezes=FreezeSet("freeze.yaml"),
        accepted=accepted_invariants(text),
        invariants_found=True,
        known_bad=(),
    )
    found = config.invariants_problem()
    assert found == problem or (problem is not None and problem in (found or ""))


# == 4. Known-bad fixtures =============================================================

BAD_FIXTURES: dict[str, tuple[str | bytes, str]] = {
    "empty": ("", "the fixture is empty; regenerate it with git diff"),
    "blank": ("\n  \n", "the fixture is empty; regenerate it with git diff"),
    "binary": (bytes(range(256)) * 4, "not a patch (git apply found no diff in it)"),
    "prose": ("make add subtract\n", "not a patch (git apply found no diff in it)"),
    "parent-dir": (
        "--- /dev/null\n+++ b/../escaped.txt\n@@ -0,0 +1 @@\n+pwned\n",
        "invalid path '../escaped.txt': a fixture may edit files inside the repository only",
    ),
    "absolute": (
        "diff --git a//tmp/andgate-escaped.txt b//tmp/andgate-escaped.txt\n"
        "new file mode 100644\n--- /dev/null\n+++ b//tmp/andgate-escaped.txt\n"
        "@@ -0,0 +1 @@\n+pwned\n",
        "invalid path '/tmp/andgate-escaped.txt'",
    ),
    "git-dir": (
        "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n"
        "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+echo pwned\n",
        "invalid path '.git/hooks/pre-commit'",
    ),
    "symlink": (
        "diff --git a/pkg/data b/pkg/data\nnew file mode 120000\n--- /dev/null\n"
        "+++ b/pkg/data\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n",
        "the fixture makes pkg/data a symbolic link; known-bad fixtures may edit regular "
        "files only",
    ),
    "symlink-mode-change": (
        "diff --git a/pkg/core.py b/pkg/core.py\nold mode 100644\nnew mode 120000\n",
        "the fixture makes pkg/core.py a symbolic link",
    ),
    "stale": (
        KB_SUBTRACTS.replace("return a + b", "return a * b"),
        "patch failed: pkg/core.py:1; refresh it for the current code: andgate known-bad refresh",
    ),
}


@pytest.fixture(scope="module")
def known_bad_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One gate run over a base holding every bad fixture (and one good one)."""
    tmp = tmp_path_factory.mktemp("known_bad")
    with isolated(tmp):
        files: dict[str, str | bytes] = {
            MANIFEST_PATH: MANIFEST.replace("oracle_must_fail_known_bad: false\n", ""),
            "tests/oracles/known_bad/good.patch": KB_SUBTRACTS,
        }
        for name, (patch, _) in BAD_FIXTURES.items():
            files[f"tests/oracles/known_bad/{name}.patch"] = patch
        repo, base = build(tmp / "repo", files)
        head = agent_change(repo)
        payload = gate_once(repo, base, head, tmp / "artifacts")
        payload["known_bad.json"] = json.loads((tmp / "artifacts/known_bad.json").read_text())
        payload["tmp"] = tmp
        return payload


@pytest.mark.parametrize("name", list(BAD_FIXTURES))
def test_known_bad_fixture_refused(known_bad_run, name):
    _, says = BAD_FIXTURES[name]
    found = [d for d in details(known_bad_run, "KNOWN_BAD_STALE") if d.startswith(f"{name} ")]
    assert len(found) == 1 and found[0].startswith(f"{name} does not apply to head: ")
    assert says in found[0], found
    fixture = next(f for f in known_bad_run["known_bad.json"]["fixtures"] if f["name"] == name)
    assert fixture["applied"] is False and fixture["bites"] is False


def test_known_bad_run_blocks_and_writes_nothing_outside(known_bad_run):
    assert known_bad_run["verdict"] == "block"
    assert not Path("/tmp/andgate-escaped.txt").exists()
    good = [f for f in known_bad_run["known_bad.json"]["fixtures"] if f["name"] == "good"]
    assert good[0]["bites"] is True
    assert {r["code"] for r in known_bad_run["reasons"]} == {"KNOWN_BAD_STALE"}


def test_known_bad_fixture_cannot_write_through_a_link_the_change_added(tiny, gate, tmp_path):
    """Head (agent-controlled) turns pkg/ into a link to a folder outside the
    repository; the fixture's edit of pkg/core.py must not land there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "core.py").write_text(CORE, encoding="utf-8")
    (outside / "__init__.py").write_text("", encoding="utf-8")
    repo, base = tiny(
        {
            MANIFEST_PATH: MANIFEST.replace("oracle_must_fail_known_bad: false\n", ""),
            "tests/oracles/known_bad/subtracts.patch": KB_SUBTRACTS,
        }
    )
    shutil.rmtree(repo.path / "pkg")
    os.symlink(outside, repo.path / "pkg")
    head = repo.commit("agent: pkg is a link", who=AGENT)
    run = gate(repo, base, head)
    blocked(
        run,
        "KNOWN_BAD_STALE",
        "subtracts does not apply to head: affected file 'pkg/core.py' is beyond a symbolic link",
    )
    assert (outside / "core.py").read_text(encoding="utf-8") == CORE


# == 5. The fixture lock ===============================================================

FIXTURE = b'{"cases": [[2, 3, 5]]}\n'
FIXTURE_SHA = hashlib.sha256(FIXTURE).hexdigest()
LOCK = "tests/oracles/locks.sha256"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (f"{FIXTURE_SHA} cases.json", "expected '<sha256>  <path>'"),
        (f"{FIXTURE_SHA[:-1]}  cases.json", "expected '<sha256>  <path>'"),
        (f"{FIXTURE_SHA}  ", "expected '<sha256>  <path>'"),
        ("cases.json", "expected '<sha256>  <path>'"),
    ],
    ids=["one-space", "short-sha", "no-path", "no-sha"],
)
def test_lock_bad_lines(line, says):
    lock = parse_lock(f"# lock\n\n{line}\n".encode(), LOCK)
    assert lock.entries == {}
    assert lock.problems == (
        f"{LOCK}:3: {says}, got {line[:60]!r}; regenerate it with `andgate lock update`",
    )


def test_lock_duplicate_lines():
    lock = parse_lock(f"{FIXTURE_SHA}  a\n{FIXTURE_SHA}  a\n".encode(), LOCK)
    assert lock.problems == (
        f"{LOCK}:2: a is listed twice; regenerate it with `andgate lock update`",
    )


def test_lock_crlf_and_sha256sum_binary_marker_parse():
    lock = parse_lock(f"{FIXTURE_SHA.upper()} *cases.json\r\n".encode(), LOCK)
    assert lock.entries == {"cases.json": FIXTURE_SHA} and lock.problems == ()


def test_lock_names_with_spaces_and_non_utf8_bytes_parse():
    text = f"{FIXTURE_SHA}  a b .json\n".encode() + FIXTURE_SHA.encode() + b"  caf\xe9\x0c.json\n"
    lock = parse_lock(text, LOCK)
    assert lock.problems == ()
    assert set(lock.entries) == {"a b .json", os.fsdecode(b"caf\xe9\x0c.json")}


def test_lock_bad_line_blocks_end_to_end(tiny, gate):
    repo, base = tiny(
        {"tests/oracles/fixtures/cases.json": FIXTURE, LOCK: f"{FIXTURE_SHA} cases.json\n"}
    )
    run = gate(repo, base, agent_change(repo))
    blocked(run, "LOCK_MISMATCH", f"{LOCK} (at {base[:12]}):1", "andgate lock update")
    blocked(run, "LOCK_MISMATCH", "tests/oracles/fixtures/cases.json: not in the lock file")


def test_lock_missing_with_fixtures_present(tiny, gate):
    repo, base = tiny({"tests/oracles/fixtures/cases.json": FIXTURE})
    run = gate(repo, base, agent_change(repo))
    blocked(
        run,
        "LOCK_MISMATCH",
        f"{LOCK} (at {base[:12]}): lock file is missing",
        "andgate lock update",
    )


def test_lock_missing_without_fixtures_is_fine():
    facts = compare(parse_lock(None, LOCK), {}, "tests/oracles/fixtures")
    assert facts == LockFacts()


# == 6. Refs, git and the environment ==================================================


def test_base_unknown(tiny, gate):
    repo, _ = tiny()
    run = gate(repo, "no-such-branch", agent_change(repo))
    blocked(
        run,
        "GATE_ERROR",
        "--base 'no-such-branch' is not a commit in",
        "check the ref name or fetch it",
    )


@pytest.mark.parametrize("ref", ["--all", "-h", "HEAD:pkg/core.py", "HEAD^{tree}"])
def test_base_that_is_an_option_or_not_a_commit(tiny, gate, ref):
    repo, _ = tiny()
    run = gate(repo, None, agent_change(repo), f"--base={ref}")
    blocked(run, "GATE_ERROR", f"--base {ref!r} is not a commit")


def test_head_unknown(tiny, gate):
    repo, base = tiny()
    run = gate(repo, base, "no-such-head")
    blocked(run, "GATE_ERROR", "--head 'no-such-head' is not a commit")


def test_base_equal_to_head(tiny, gate):
    repo, base = tiny()
    run = gate(repo, base, base)
    blocked(
        run, "GATE_ERROR", "is the same commit as --head: nothing to gate", "pass the branch point"
    )
    assert run.payload["base"] == run.payload["head"] == base  # both named in the verdict


def test_base_omitted_without_upstream(tiny, gate):
    repo, _ = tiny()
    run = gate(repo, None, agent_change(repo))
    blocked(run, "GATE_ERROR", "--base is required: no upstream default branch", "pass --base REF")


def shallow_clone(repo: SampleRepo, dest: Path, *args: str) -> SampleRepo:
    repo.git.run("clone", "-q", "--depth", "1", *args, f"file://{repo.path}", str(dest))
    return SampleRepo(dest)


def test_shallow_clone_missing_the_base(tiny, gate, tmp_path):
    repo, base = tiny()
    agent_change(repo)
    clone = shallow_clone(repo, tmp_path / "clone")
    run = gate(clone, base)
    blocked(
        run,
        "GATE_ERROR",
        f"--base {base!r} is not in this shallow clone",
        "fetch full history",
        "fetch-depth: 0",
    )


def test_shallow_clone_without_merge_base_for_the_default_base(tiny, gate, tmp_path):
    repo, _ = tiny()
    repo.run("checkout", "-q", "-b", "feature")
    agent_change(repo)
    agent_change(repo, {"pkg/more.py": "MORE = 2\n"})
    clone = shallow_clone(repo, tmp_path / "clone", "--branch", "feature")
    clone.git.run("fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    clone.git.run("remote", "set-head", "origin", "--delete", check=False)  # as CI has it
    run = gate(clone, None)
    blocked(
        run,
        "GATE_ERROR",
        "no merge-base of refs/remotes/origin/main and HEAD in this shallow clone",
        "fetch full history",
    )


def test_not_a_git_repository(gate, tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    run = gate(folder, "HEAD~1")
    blocked(run, "GATE_ERROR", f"{folder}: not a git repository", "pass --repo DIR")


def test_repo_folder_missing(tmp_path, capsys):
    code = main(["check", "--repo", str(tmp_path / "nope"), "--base", "main", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err
    assert err == (
        f"andgate: {tmp_path / 'nope'}: no such directory, so no artifacts were written; "
        "pass --repo DIR naming a git checkout\n"
    )
    assert not (tmp_path / "nope").exists()


def test_artifacts_folder_unwritable(tiny, tmp_path, capsys):
    repo, base = tiny(drop=(MANIFEST_PATH,))
    head = agent_change(repo)
    target = tmp_path / "a-file"
    target.write_text("not a folder", encoding="utf-8")
    code = main(
        [
            "check",
            "--repo",
            str(repo.path),
            "--base",
            base,
            "--head",
            head,
            "--artifacts",
            str(target),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err
    assert err.splitlines() == [
        f"andgate: {target}: cannot write the artifacts (File exists); pass --artifacts DIR "
        "naming a writable folder"
    ]


def test_git_not_installed(tiny, gate, monkeypatch, tmp_path):
    repo, base = tiny()
    head = agent_change(repo)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    run = gate(repo, base, head)
    blocked(run, "GATE_ERROR", "git is not installed or not on PATH: install git")
    assert run.payload["base"] is None and run.payload["head"] is None


def test_no_pytest_in_the_target_environment(tiny, gate, monkeypatch, tmp_path):
    """pytest shadowed by a package that fails to import, as in an environment
    without pytest: every class process fails to start, and says why."""
    shadow = tmp_path / "no-pytest" / "pytest"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'pytest'\", name='pytest')\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", str(shadow.parent))
    repo, base = tiny()
    run = gate(repo, base, agent_change(repo))
    detail = blocked(
        run,
        "GATE_ERROR",
        "the oracle pytest process could not start: No module named 'pytest'",
        "install pytest in the environment",
    )
    assert sys.executable in detail
    assert run.payload["bits"]["oracle_ok"] is False


# == 7. File names and empty repositories ===============================================

ODD = os.fsdecode(b"caf\xe9")  # not UTF-8: git reports it, Python keeps it as surrogates


def test_odd_file_names_are_gated_like_any_other(tiny, gate):
    """Non-UTF-8 and space-laden names in oracles, untrusted tests, locked
    fixtures and production files: classified, locked and run, no crash."""
    fixtures = {f"{ODD} cases.json": FIXTURE, "with space.json": FIXTURE}
    lock = "".join(f"{FIXTURE_SHA}  {name}\n" for name in sorted(fixtures))
    repo, base = tiny(
        {
            f"tests/oracles/test_{ODD}.py": "def test_odd():\n    assert True\n",
            "tests/oracles/test_with space.py": "def test_spaced():\n    assert True\n",
            f"tests/test_{ODD} misc.py": "def test_misc():\n    assert True\n",
            **{f"tests/oracles/fixtures/{n}": data for n, data in fixtures.items()},
            LOCK: lock.encode("utf-8", "surrogateescape"),
        }
    )
    head = agent_change(repo, {f"pkg/{ODD} data.py": "X = 1\n", "pkg/a b.py": "Y = 2\n"})
    run = gate(repo, base, head)
    assert run.payload["verdict"] == "allow", run.payload["reasons"]
    assert run.payload["counts"] == {"oracle": 3, "property": 0, "frozen_flake": 0, "untrusted": 1}
    inventory = json.loads((run.artifacts / "trust_inventory.json").read_text("ascii"))
    assert f"tests/oracles/test_{ODD}.py::test_odd" in {i["nodeid"] for i in inventory["items"]}
    assert "<testsuites" in (run.artifacts / "oracle.xml").read_text("utf-8")


def test_odd_file_name_is_named_in_a_block_and_printed(tiny, tmp_path, capsys):
    repo, base = tiny({f"tests/oracles/test_{ODD}.py": "def test_odd():\n    assert True\n"})
    head = agent_change(repo, {f"tests/oracles/test_{ODD}.py": "def test_odd():\n    pass\n"})
    code = main(
        [
            "check",
            "--repo",
            str(repo.path),
            "--base",
            base,
            "--head",
            head,
            "--today",
            TODAY,
            "--artifacts",
            str(tmp_path / "art"),
            "--jobs",
            "2",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    assert "ORACLE_AUTHORSHIP: tests/oracles/test_caf\\udce9.py changed without owner" in out
    summary = (tmp_path / "art" / "summary.md").read_text(encoding="utf-8")
    assert "tests/oracles/test_caf\\udce9.py changed without owner approval" in summary
    verdict = json.loads((tmp_path / "art" / "verdict.json").read_text(encoding="ascii"))
    authorship = [r for r in verdict["reasons"] if r["code"] == "ORACLE_AUTHORSHIP"]
    assert authorship[0]["detail"].startswith(f"tests/oracles/test_{ODD}.py changed")


def test_repo_with_no_tests_at_all(tiny, gate):
    strict = MANIFEST.replace("require_property_class: false\n", "").replace(
        "oracle_must_fail_known_bad: false\n", ""
    )
    repo, base = tiny({MANIFEST_PATH: strict}, drop=("tests/oracles/test_core.py",))
    run = gate(repo, base, agent_change(repo))
    blocked(run, "NO_ORACLE", "no oracle item was collected")
    blocked(run, "NO_PROPERTY", "the property class is empty")
    blocked(run, "NO_KNOWN_BAD", "no *.patch fixture")
    assert run.payload["counts"] == dict.fromkeys(
        ("oracle", "property", "frozen_flake", "untrusted"), 0
    )


def test_oracle_globs_matching_no_file(tiny, gate):
    text = MANIFEST.replace('globs: ["tests/oracles/**/*.py"]', 'globs: ["tests/oracle/**/*.py"]')
    repo, base = tiny(with_manifest(text))
    run = gate(repo, base, agent_change(repo))
    blocked(run, "NO_ORACLE", "no oracle item was collected")


def test_manifest_error_is_one_line_on_the_terminal(tiny, tmp_path, capsys):
    repo, base = tiny(with_manifest(MANIFEST.replace("  oracle:\n", "  oracel:\n")))
    head = agent_change(repo)
    code = main(
        [
            "check",
            "--repo",
            str(repo.path),
            "--base",
            base,
            "--head",
            head,
            "--artifacts",
            str(tmp_path / "art"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 2 and err == "" and "Traceback" not in out
    reason_lines = [line for line in out.splitlines() if "MANIFEST_INVALID" in line]
    assert reason_lines == [
        f"  MANIFEST_INVALID: {MANIFEST_PATH} (at {base[:12]}): unknown key 'oracel' under "
        "classes; did you mean 'oracle'?"
    ]


def test_manifest_errors_are_raised_not_swallowed_by_the_parser():
    """The parser itself: every manifest problem is a ManifestError (which
    check turns into MANIFEST_INVALID), never another exception type."""
    for text in ("", "[", "a: !!int x", "version: 2026-13-01\nclasses: {oracle: {globs: [a]}}"):
        with pytest.raises(ManifestError):
            parse_manifest(text, MANIFEST_PATH)


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--today", "2026-13-01", "argument --today: '2026-13-01' is not a date; use YYYY-MM-DD"),
        ("--jobs", "0", "argument --jobs: '0' must be a whole number >= 1"),
        ("--timeout", "-5", "argument --timeout: '-5' must be a number of seconds > 0"),
    ],
    ids=["today", "jobs", "timeout"],
)
def test_bad_command_line_values(capsys, option, value, says):
    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--base", "main", f"{option}={value}"])
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2 and "Traceback" not in err
    assert err.splitlines()[-1] == f"andgate check: error: {says}"


def test_an_internal_error_with_a_multi_line_message_is_one_line(tiny, gate, monkeypatch):
    """Whatever breaks inside the gate, the reason stays one line; the full
    traceback goes to logs/gate_error.log."""
    import andgate.check.pipeline

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("first line\nsecond line\n  third")

    monkeypatch.setattr(andgate.check.plan.phase, "make_plan", explode)
    repo, base = tiny()
    run = gate(repo, base, agent_change(repo))
    assert run.payload["reasons"] == [
        {"code": "GATE_ERROR", "detail": "internal error: RuntimeError: first line"}
    ]
    assert run.exit_code == 2
    log = (run.artifacts / "logs" / "gate_error.log").read_text(encoding="utf-8")
    assert "second line" in log
