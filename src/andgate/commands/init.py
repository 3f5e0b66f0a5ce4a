"""`andgate init`: scaffold the trust files in an existing repository.

Writes the manifest (every key commented), the oracle folder, the known-bad
folder with a README on writing a fixture, INVARIANTS.md, the freeze file and
an empty lock. It never overwrites a file: each one is created exclusively and
an existing one is reported as skipped. To let an existing suite be adopted
without moving files, it looks for test folders and registered pytest markers
and writes them into the manifest as commented suggestions.

Exit codes: 0 done (even when every file already existed), 2 could not write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from andgate import pytest_config, writer
from andgate.commands.agents import HINT as AGENTS_HINT
from andgate.commands.agents import add_agent_block
from andgate.commands.common import open_repo, plural, read_file
from andgate.commands.freeze_edit import yaml_string
from andgate.errors import AndgateError, ManifestError
from andgate.exitcodes import InitExit
from andgate.git import Git, decode_path
from andgate.manifest import DEFAULT_MANIFEST, Manifest, parse_manifest
from andgate.paths import is_under

EXIT_OK = InitExit.OK
MARKER_NAME = re.compile(r"\s*([A-Za-z_]\w*)")
ORACLE_HINTS = ("oracle", "golden", "regression", "acceptance", "contract", "snapshot", "example")
PROPERTY_HINTS = ("propert", "hypothesis", "fuzz", "seed")
FLAKE_HINTS = ("flak",)
MAX_SUGGESTED_FOLDERS = 12


@dataclass(frozen=True)
class Layout:
    """Where the trust files go: the manifest's paths, or the defaults."""

    manifest: str
    oracle_dir: str
    known_bad_dir: str
    invariants_file: str
    freeze_file: str
    lock_file: str

    @classmethod
    def of(cls, manifest_path: str, manifest: Manifest | None) -> Layout:
        if manifest is None:
            return cls(
                manifest_path,
                "tests/oracles",
                "tests/oracles/known_bad",
                "tests/properties/INVARIANTS.md",
                "tests/flakes/freeze.yaml",
                "tests/oracles/locks.sha256",
            )
        oracle_dir = str(PurePosixPath(manifest.known_bad_dir).parent)
        return cls(
            manifest_path,
            oracle_dir,
            manifest.known_bad_dir,
            manifest.property.invariants_file,
            manifest.frozen_flake.freeze_file,
            manifest.lock_file,
        )


@dataclass(frozen=True)
class Survey:
    """What the repository already has: test folders and pytest markers."""

    test_dirs: dict[str, int]
    markers: dict[str, tuple[str, ...]]
    unreadable: tuple[str, ...] = ()

    @property
    def marker_names(self) -> tuple[str, ...]:
        return tuple(sorted({m for names in self.markers.values() for m in names}))


GITHUB_WORKFLOW = ".github/workflows/andgate.yml"


def github_workflow() -> str:
    """The workflow `init --github` writes (package data, validated in CI)."""
    from importlib.resources import files

    return (files("andgate") / "templates" / "github_workflow.yml").read_text(encoding="utf-8")


def run_init(
    repo: Path, *, manifest: str = DEFAULT_MANIFEST, github: bool = False, agents: str | None = None
) -> int:
    git = open_repo(repo)
    root = git.repo
    survey = survey_repo(git)
    layout = Layout.of(manifest, _existing_manifest(root, manifest))
    created, skipped = [], []
    files = scaffold(layout, survey)
    if github:
        files[GITHUB_WORKFLOW] = github_workflow()
    for rel, text in files.items():
        (created if _create(root, rel, text) else skipped).append(rel)
    print(_report(root, layout, survey, created, skipped), end="")
    print(add_agent_block(root, agents, layout.manifest) if agents else AGENTS_HINT)
    return EXIT_OK


def _existing_manifest(root: Path, path: str) -> Manifest | None:
    """An existing, valid manifest decides where the other files go."""
    text = read_file(root, path)
    if text is None:
        return None
    try:
        return parse_manifest(text, path)
    except ManifestError as exc:
        print(
            f"andgate init: the existing manifest is not valid, so the other files go to "
            f"the default paths; fix it: {exc}"
        )
        return None


def _create(root: Path, rel: str, text: str) -> bool:
    """Write a new file; False when something is already there (never overwritten).
    The text is encoded before the file is created, so a failure leaves no empty file."""
    target = root / rel
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise AndgateError(_cannot_create(rel, "its text is not UTF-8")) from None
    try:
        with writer.Folder.claim(target.parent, anchor=root) as folder:
            return writer.create_new(folder.fd, target.name, data)
    except writer.RefusedPath as exc:
        why = "a parent path is a file" if exc.at.is_file() else f"{exc.at} is a symlink"
        raise AndgateError(_cannot_create(rel, why)) from None
    except FileExistsError:
        raise AndgateError(_cannot_create(rel, "a parent path is a file")) from None
    except OSError as exc:
        raise AndgateError(_cannot_create(rel, exc.strerror or str(exc))) from exc


def _cannot_create(rel: str, why: str) -> str:
    return f"{rel}: cannot create it ({why}); fix the path or its permissions and rerun init"


# -- survey ---------------------------------------------------------------------------------


def survey_repo(git: Git) -> Survey:
    # A name that is not UTF-8 (decoded with surrogateescape) cannot be written
    # into the manifest, a UTF-8 file: it is not suggested.
    files = [f for f in _repo_files(git) if _is_utf8(f)]
    tests = [f for f in files if _is_test_module(PurePosixPath(f).name)]
    folders = sorted({str(PurePosixPath(f).parent) for f in tests})
    # A folder's glob covers its subfolders, so its count includes their files.
    counts = {d: sum(d == "." or is_under(f, d) for f in tests) for d in folders}
    markers: dict[str, tuple[str, ...]] = {}
    unreadable = []
    for name in pytest_config.CANDIDATES:
        raw = read_file(git.repo, name)
        if raw is None:
            continue
        try:
            found = _markers_of(name, raw)
        except pytest_config.Unreadable:
            unreadable.append(name)
            continue
        if found:
            markers[name] = found
    return Survey(counts, markers, tuple(unreadable))


def _repo_files(git: Git) -> list[str]:
    """Tracked files and untracked ones git does not ignore (no virtualenvs)."""
    raw = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    return [decode_path(p) for p in raw.split(b"\0") if p]


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_test_module(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _markers_of(name: str, raw: bytes) -> tuple[str, ...]:
    """Registered marker names, read as pytest reads the file."""
    names = (MARKER_NAME.match(line) for line in pytest_config.markers(name, raw))
    return tuple(dict.fromkeys(m.group(1) for m in names if m))


# -- the files ------------------------------------------------------------------------------


def scaffold(layout: Layout, survey: Survey) -> dict[str, str]:
    """Every file init writes, path -> text, in the order they are reported."""
    return {
        layout.manifest: manifest_text(layout, survey),
        f"{layout.oracle_dir}/README.md": ORACLE_README,
        f"{layout.known_bad_dir}/README.md": KNOWN_BAD_README.format(
            known_bad_dir=layout.known_bad_dir, oracle_dir=layout.oracle_dir
        ),
        layout.invariants_file: INVARIANTS_MD,
        layout.freeze_file: FREEZE_YAML,
        layout.lock_file: "",
    }


def _flake_globs(survey: Survey) -> list[str]:
    """Every folder holding tests today, so an existing flaky test can be frozen."""
    tops = {"tests"}
    for folder in survey.test_dirs:
        parts = PurePosixPath(folder).parts
        if parts and folder != ".":
            tops.add(parts[0])
    return [f"{top}/**/*.py" for top in sorted(tops)]


def _hinted(names: Iterable[str], hints: tuple[str, ...]) -> list[str]:
    return [n for n in names if any(h in n.lower() for h in hints)]


def _commented(lines: list[str]) -> str:
    return "".join(f"    # {line}".rstrip() + "\n" for line in lines)


def _glob_lines(folders: dict[str, int]) -> list[str]:
    globs = {folder: "*.py" if folder == "." else f"{folder}/**/*.py" for folder in folders}
    width = max(len(g) for g in globs.values()) + 4
    lines = []
    for folder, count in list(folders.items())[:MAX_SUGGESTED_FOLDERS]:
        value = _yaml_list([globs[folder]])
        lines.append(f"  globs: {value:<{width}}  # {plural(count, 'test file')}")
    if len(folders) > MAX_SUGGESTED_FOLDERS:
        lines.append(f"  ... and {len(folders) - MAX_SUGGESTED_FOLDERS} more test folders")
    return lines


def oracle_suggestions(survey: Survey) -> str:
    """Commented lines under classes.oracle: existing tests an adopter can point at."""
    lines = []
    if survey.test_dirs:
        lines += [
            "Test folders found in this repository. To adopt tests without moving them,",
            'copy a glob, or name single files such as "tests/test_api.py":',
            *_glob_lines(survey.test_dirs),
        ]
    for source, names in survey.markers.items():
        example = (_hinted(names, ORACLE_HINTS) or [names[0]])[0]
        lines += [
            f"Markers registered in {source}: {', '.join(names)}. To make only marked",
            f"items of the files oracle tests, e.g.:  markers: [{example}]",
        ]
    return _commented(lines)


def property_suggestions(survey: Survey) -> str:
    folders = {d: n for d, n in survey.test_dirs.items() if _hinted([d], PROPERTY_HINTS)}
    markers = _hinted(survey.marker_names, PROPERTY_HINTS)
    lines = ["Found in this repository, property-like:"] if folders or markers else []
    lines += _glob_lines(folders) if folders else []
    lines += [f"  markers: [{', '.join(markers)}]"] if markers else []
    return _commented(lines)


def flake_suggestions(survey: Survey) -> str:
    markers = _hinted(survey.marker_names, FLAKE_HINTS)
    if not markers:
        return ""
    return _commented(
        [
            f"Flaky-test markers found: {', '.join(markers)}. Listing them here helps reports;",
            "an item needs a live freeze entry (andgate freeze add) to be frozen.",
        ]
    )


def _yaml_list(items: Iterable[str]) -> str:
    """A one-line YAML flow list of quoted strings: any character in a folder
    name (a quote, a backslash, a colon) stays inside its string."""
    return "[" + ", ".join(yaml_string(i) for i in items) + "]"


def manifest_text(layout: Layout, survey: Survey) -> str:
    return MANIFEST_TEMPLATE.format(
        oracle_suggestions=oracle_suggestions(survey),
        property_suggestions=property_suggestions(survey),
        flake_suggestions=flake_suggestions(survey),
        invariants_file=layout.invariants_file,
        freeze_file=layout.freeze_file,
        flake_globs=_yaml_list(_flake_globs(survey)),
        known_bad_dir=layout.known_bad_dir,
        lock_file=layout.lock_file,
        fixtures_dir=f"{layout.oracle_dir}/fixtures",
        oracle_glob=f"{layout.oracle_dir}/**/*.py",
    )


def _report(
    root: Path, layout: Layout, survey: Survey, created: list[str], skipped: list[str]
) -> str:
    lines = [f"andgate init: {root}"]
    lines += [f"  created  {p}" for p in created]
    lines += [f"  skipped  {p} (exists; not overwritten)" for p in skipped]
    if survey.test_dirs:
        found = ", ".join(f"{d} ({n})" for d, n in survey.test_dirs.items())
        lines.append(f"test folders found (suggested in the manifest, commented): {found}")
    if survey.marker_names:
        lines.append(f"pytest markers found: {', '.join(survey.marker_names)}")
    lines += [f"could not read {name}; its markers are not suggested" for name in survey.unreadable]
    lines += NEXT_STEPS.format(
        manifest=layout.manifest,
        oracle_dir=layout.oracle_dir,
        known_bad_dir=layout.known_bad_dir,
        invariants_file=layout.invariants_file,
    ).splitlines()
    return "\n".join(lines) + "\n"


NEXT_STEPS = """\
Next steps:
  1. Move human-owned tests under {oracle_dir}/, or point classes.oracle.globs in
     {manifest} at them (see the suggestions there) and list your owners.
  2. Write a known-bad fixture: see {known_bad_dir}/README.md.
  3. Add a property test declaring `# INVARIANT: <text>` and accept <text> as a
     `- <text>` line of {invariants_file}.
  4. Run `andgate lock update`, commit, then `andgate classify` and
     `andgate replay-known-bad` to see the trust inventory and the proof.
"""

MANIFEST_TEMPLATE = """\
# andgate trust manifest, written by `andgate init`.
# andgate sorts every test item into a trust class (oracle, property, frozen_flake,
# untrusted), runs each class, and allows a change only when every class holds.
# `check` reads this file from the base commit, so a change cannot relax its own
# gate; changing it is a trust-root change that needs an owner's approval.
# Unknown keys are errors, never ignored: a typo must not open the gate.
# Globs use gitignore semantics: "tests/oracles/**/*.py" also matches
# tests/oracles/test_a.py.
version: 1
classes:
  # Human-owned examples: they must all pass, and must still FAIL under every
  # known-bad fixture. Changing them without approval blocks (ORACLE_AUTHORSHIP).
  oracle:
    # true: an oracle change blocks unless an owner approved it.
    require_human_owner: true
    # Files whose test items are oracle tests. At least one glob.
    globs: ["{oracle_glob}"]
{oracle_suggestions}\
    # Non-empty: only items carrying one of these markers are oracle tests
    # (register the markers in your pytest config). Empty: every item of the files.
    markers: []
  # Seeded or parametrised checks whose invariant a human accepted: they must pass,
  # with the seeds they ran with recorded (a `seed` parameter, or Hypothesis).
  property:
    # true: a property file counts only when it declares `# INVARIANT: <text>` and
    # <text> is a `- <text>` line of invariants_file; otherwise it is untrusted.
    require_accepted_invariant: true
    globs: ["tests/properties/**/*.py"]
{property_suggestions}\
    markers: []
    invariants_file: {invariants_file}
  # Flaky tests with a live entry in freeze_file: run apart, outcome ignored.
  frozen_flake:
    # Entries need id, reason, first_seen, expires, owner (andgate freeze add).
    freeze_file: {freeze_file}
    # Only tests in these files can be frozen; oracle and property tests never are.
    globs: {flake_globs}
    # A marker alone never freezes a test.
{flake_suggestions}\
    markers: []
# true: a failing untrusted test (any test in no class above) blocks the change.
fail_closed_untrusted: true
# true: every *.patch under known_bad_dir must make at least one oracle test fail.
oracle_must_fail_known_bad: true
known_bad_dir: {known_bad_dir}
# Names whose approval (andgate check --approved-by NAME) lets trust-root changes in.
owners: []
# Empty: every changed file that is neither a test nor a trust-root file is production.
production_globs: []
# sha256 of every file under fixtures_dir; `andgate lock update` writes it.
lock_file: {lock_file}
fixtures_dir: {fixtures_dir}
# The longest a freeze may last (expires - first_seen), in days.
max_freeze_days: 28
# true: an empty property class blocks (NO_PROPERTY).
require_property_class: true
"""

ORACLE_README = """\
# Oracle tests

Human-owned examples: the tests that say what correct means. andgate runs them
against the change's production code with the base commit's test side, requires
every one to pass, and requires at least one of them to fail under each
known-bad fixture (known_bad/). A change to these files, to fixtures/ or to the
lock blocks unless an owner listed in the manifest approves it.

Keep them readable and exact: a test that only checks types catches nothing.
Data files the tests read go under fixtures/; pin them with `andgate lock update`.
"""

KNOWN_BAD_README = """\
# Known-bad fixtures

Each `*.patch` file here is a real bug, kept as a `git diff` of production code.
andgate applies it (`git apply`) to a clean worktree and runs the oracle class:
at least one oracle test must fail, which proves the oracles still catch that
bug. A fixture that leaves every oracle passing blocks as ORACLE_NEUTRALIZED;
one that no longer applies blocks as KNOWN_BAD_STALE.

Writing one:

1. Reintroduce the bug in the production code (not in tests), for example a
   bug you fixed before or a mutation you expect the oracles to catch.
2. Save the diff and restore the code:

       git diff -- src/ > {known_bad_dir}/kb_short_name.patch
       git checkout -- src/

3. Check that it bites: `andgate replay-known-bad` lists, per fixture, whether
   it applied and which oracle test failed.
4. Commit it with an owner's approval (it is a trust-root file).

When production code moves, refresh stale fixtures the same way. Files other
than `*.patch` (like this README) are ignored.
"""

INVARIANTS_MD = """\
# Accepted invariants

A property test is trusted only when it declares an invariant that a human
accepted here. In the test file write a comment line

    # INVARIANT: <one sentence the test checks for every input>

and accept it by adding that sentence as a list item of this file: a line that
starts with a dash and a space. Whitespace runs and one trailing period are
ignored when comparing; case matters. Only list items count as accepted, so
write notes as plain paragraphs like this one.

Accepted:
"""

FREEZE_YAML = """\
# Frozen flaky tests: their outcome is logged and ignored until `expires`.
# Every field is required; dates are YYYY-MM-DD; a freeze is expired when
# expires <= today and may last at most max_freeze_days. An id names a node id,
# a file path, a file stem or a function name. Manage entries with
# `andgate freeze list | add | prune`.
freezes: []
"""
