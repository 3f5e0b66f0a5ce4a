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

import argparse
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from andgate import writer
from andgate.commands import options
from andgate.commands.agents import HINT as AGENTS_HINT
from andgate.commands.agents import add_agent_block
from andgate.commands.common import open_repo, plural, read_file
from andgate.commands.init_survey import Survey, survey_repo
from andgate.commands.init_texts import (
    FREEZE_YAML,
    INVARIANTS_MD,
    KNOWN_BAD_README,
    MANIFEST_TEMPLATE,
    ORACLE_README,
)
from andgate.commands.install_source import ACTION_PLACEHOLDER, ActionPin, installed_action_pin
from andgate.commands.layout import (
    collection_lines,
    trust_home,
)
from andgate.commands.xfails import FIX as XFAIL_FIX
from andgate.commands.xfails import WHY as XFAIL_WHY
from andgate.errors import AndgateError, ManifestError
from andgate.exitcodes import Exit
from andgate.trust.freeze_edit import yaml_string
from andgate.trust.manifest import DEFAULT_MANIFEST, Manifest, parse_manifest
from andgate.trust.paths import is_under

ORACLE_HINTS = ("oracle", "golden", "regression", "acceptance", "contract", "snapshot", "example")
PROPERTY_HINTS = ("propert", "hypothesis", "fuzz", "seed")
FLAKE_HINTS = ("flak",)
MAX_SUGGESTED_FOLDERS = 12
# Up to this many existing test files are proposed one by one as oracle files
# (tests added later stay untrusted); more are proposed by folder.
MAX_PROPOSED_FILES = 40
# The template's install line; `init --github` puts what it found for the project there.
INSTALL_PLACEHOLDER = 'python -m pip install -e ".[test]"'


@dataclass(frozen=True)
class Layout:
    """Where the trust files go: the manifest's paths, or the defaults (the oracle and
    property folders under `home`, a folder pytest collects: `tests`, or the test
    folder inside the project's `testpaths` on a flat layout)."""

    manifest: str
    oracle_dir: str
    known_bad_dir: str
    invariants_file: str
    freeze_file: str
    lock_file: str
    property_dir: str = "tests/properties"

    @classmethod
    def of(cls, manifest_path: str, manifest: Manifest | None, home: str = "tests") -> Layout:
        if manifest is None:
            return cls(
                manifest_path,
                f"{home}/oracles",
                f"{home}/oracles/known_bad",
                f"{home}/properties/INVARIANTS.md",
                "tests/flakes/freeze.yaml",
                f"{home}/oracles/locks.sha256",
                f"{home}/properties",
            )
        oracle_dir = str(PurePosixPath(manifest.known_bad_dir).parent)
        return cls(
            manifest_path,
            oracle_dir,
            manifest.known_bad_dir,
            manifest.property.invariants_file,
            manifest.frozen_flake.freeze_file,
            manifest.lock_file,
            str(PurePosixPath(manifest.property.invariants_file).parent),
        )


GITHUB_WORKFLOW = ".github/workflows/andgate.yml"


def github_workflow(install: str = INSTALL_PLACEHOLDER, pin: ActionPin | None = None) -> str:
    """The workflow `init --github` writes (package data, validated in CI), with
    the line that installs the project and its test dependencies filled in, and the
    action pinned to the repository andgate was installed from when that is known."""
    from importlib.resources import files

    text = (files("andgate.commands") / "templates" / "github_workflow.yml").read_text(
        encoding="utf-8"
    )
    text = text.replace(INSTALL_PLACEHOLDER, install)
    if pin is not None:
        text = text.replace(f"uses: {ACTION_PLACEHOLDER}\n", f"uses: {pin.uses}\n")
    return text


def run_init(
    repo: Path, *, manifest: str = DEFAULT_MANIFEST, github: bool = False, agents: str | None = None
) -> int:
    git = open_repo(repo)
    root = git.repo
    survey = survey_repo(git)
    home = trust_home(survey.test_files, survey.testpaths) or "tests"
    layout = Layout.of(manifest, _existing_manifest(root, manifest), home)
    created: list[str] = []
    skipped: list[str] = []
    files = scaffold(layout, survey)
    if github:
        files[GITHUB_WORKFLOW] = github_workflow(survey.install, installed_action_pin())
    for rel, text in files.items():
        (created if _create(root, rel, text) else skipped).append(rel)
    print(_report(root, layout, survey, created, skipped), end="")
    print(add_agent_block(root, agents, layout.manifest) if agents else AGENTS_HINT)
    return Exit.OK


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Write the manifest, oracle and known-bad folders, INVARIANTS.md, the freeze file and "
        "an empty lock; suggest globs for existing test folders and markers. Never "
        "overwrites a file. Exit 0 done, 2 could not write."
    )
    options.add_repo(parser)
    options.add_manifest(parser)
    parser.add_argument(
        "--github",
        action="store_true",
        help="also write .github/workflows/andgate.yml (the secure pull-request workflow)",
    )
    parser.add_argument(
        "--agents",
        metavar="FILE",
        help="add a short block to the agent instruction file FILE (e.g. AGENTS.md): never "
        "edit oracle tests; if one contradicts the task, run `andgate dispute` and stop",
    )
    options.handled_by(parser, _init)


def _init(args: argparse.Namespace) -> int:
    return run_init(args.repo, manifest=args.manifest, github=args.github, agents=args.agents)


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


# -- the files ------------------------------------------------------------------------------


def scaffold(layout: Layout, survey: Survey) -> dict[str, str]:
    """Every file init writes, path -> text, in the order they are reported."""
    return {
        layout.manifest: manifest_text(layout, survey),
        f"{layout.oracle_dir}/README.md": ORACLE_README,
        f"{layout.known_bad_dir}/README.md": KNOWN_BAD_README.format(
            known_bad_dir=layout.known_bad_dir,
            oracle_dir=layout.oracle_dir,
            module=survey.example_module,
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


# The glob of the repository's top folder: its test modules at any depth (gitignore
# semantics), never "*.py", which would make every Python file, production too, an oracle.
TOP_FOLDER_GLOBS = ("test_*.py", "*_test.py")


def folder_globs(folder: str) -> list[str]:
    """The oracle globs of a test folder: everything under it; the top folder's test modules."""
    return list(TOP_FOLDER_GLOBS) if folder == "." else [f"{folder}/**/*.py"]


def _glob_lines(folders: dict[str, int], layout: Layout | None = None) -> list[str]:
    values = {folder: _yaml_list(_folder_glob(folder, layout)) for folder in folders}
    width = max(len(v) for v in values.values())
    lines = []
    for folder, count in list(folders.items())[:MAX_SUGGESTED_FOLDERS]:
        value = values[folder]
        lines.append(f"  globs: {value:<{width}}  # {plural(count, 'test file')}")
    if len(folders) > MAX_SUGGESTED_FOLDERS:
        lines.append(f"  ... and {len(folders) - MAX_SUGGESTED_FOLDERS} more test folders")
    return lines


def _folder_glob(folder: str, layout: Layout | None) -> list[str]:
    """A test folder's oracle glob; when the property folder lies inside it, without it
    (the oracle class comes first: a property test there would be an oracle)."""
    globs = folder_globs(folder)
    if layout is not None and (folder == "." or is_under(layout.property_dir, folder)):
        globs.append(f"!{layout.property_dir}/**")
    return globs


def _proposable_dirs(survey: Survey) -> dict[str, int]:
    """The test folders with a test module init would propose (not a benchmark script,
    not outside testpaths), with how many."""
    kept = [f for f in survey.test_files if f not in survey.left_out]
    counts = {d: sum(d == "." or is_under(f, d) for f in kept) for d in survey.test_dirs}
    return {d: n for d, n in counts.items() if n}


def oracle_suggestions(survey: Survey, layout: Layout | None = None) -> str:
    """Commented lines under classes.oracle: existing tests an adopter can point at."""
    lines = []
    folders = _proposable_dirs(survey)
    if folders:
        example = next(iter(folders))
        example = "tests" if example == "." else example
        lines += [
            "Test folders found in this repository. To adopt tests without moving them,",
            f'copy a glob, or name single files such as "{example}/test_api.py":',
            *_glob_lines(folders, layout),
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
        oracle_suggestions=oracle_suggestions(survey, layout),
        property_globs=_yaml_list([f"{layout.property_dir}/**/*.py"]),
        property_suggestions=property_suggestions(survey),
        flake_suggestions=flake_suggestions(survey),
        invariants_file=layout.invariants_file,
        freeze_file=layout.freeze_file,
        flake_globs=_yaml_list(_flake_globs(survey)),
        known_bad_dir=layout.known_bad_dir,
        lock_file=layout.lock_file,
        fixtures_dir=f"{layout.oracle_dir}/fixtures",
        oracle_globs=_proposed_oracle_globs(layout, survey),
        xfail_note=_commented(xfail_note(survey)),
        generated_files=_yaml_list(survey.generated),
        production_scan=production_scan_text(survey),
    )


PLUGIN_CONSTRUCTS = "[pytest_plugin, harness_reference]"


def production_scan_text(survey: Survey) -> str:
    """For a project that is a pytest plugin: its hooks and `import pytest`, allowed in
    the modules its build files declare (docs/pytest-plugin-projects.md)."""
    lines = [
        "# This project declares pytest plugins (pytest11 entry points): their hooks and",
        "# `import pytest` are production code that the scan flags (pytest_plugin,",
        "# harness_reference) in every change that adds one, except where allowed here:",
        "# the declared modules. A hook added anywhere else is still flagged.",
        "production_scan:",
        "  allow:",
        *(f"    {yaml_string(f)}: {PLUGIN_CONSTRUCTS}" for f in survey.plugin_files),
    ]
    return "\n".join(lines) + "\n" if survey.plugin_files else ""


def _proposed_oracle_globs(layout: Layout, survey: Survey) -> str:
    """The oracle folder, and the tests the project has today: written by its
    humans before andgate, so they are proposed as its oracle (tests a change adds
    later stay untrusted). Many files are proposed by folder instead."""
    own = f"{layout.oracle_dir}/**/*.py"
    existing = [
        f
        for f in survey.test_files
        if not is_under(f, layout.oracle_dir) and f not in survey.left_out
    ]
    proposed = [f for f in existing if f not in survey.xfails]
    if len(proposed) > MAX_PROPOSED_FILES:
        # By folder, each file with an xfail item left out by a negated glob.
        folders = _folder_globs(_proposable_dirs(survey), layout)
        proposed = [g for g in folders if g != own]
        proposed += [f"!{f}" for f in existing if f in survey.xfails]
    return _yaml_list([own, *proposed])


MAX_XFAIL_PLACES = 3  # per file, in the manifest's comment and init's report
MAX_XFAIL_FILES = 12


def xfail_files(survey: Survey) -> list[str]:
    """Each test file left out of the oracle proposal for its xfail items, with where."""
    lines = []
    for rel, places in list(survey.xfails.items())[:MAX_XFAIL_FILES]:
        shown = "; ".join(x.describe() for x in places[:MAX_XFAIL_PLACES])
        more = len(places) - MAX_XFAIL_PLACES
        lines.append(f"{rel}: {shown}{f'; and {more} more' if more > 0 else ''}")
    if len(survey.xfails) > MAX_XFAIL_FILES:
        lines.append(f"... and {len(survey.xfails) - MAX_XFAIL_FILES} more files")
    return lines


def xfail_note(survey: Survey) -> list[str]:
    """The manifest's comment under the proposed globs: what was left out, and why."""
    if not survey.xfails:
        return []
    why = f"Not proposed: {XFAIL_WHY}. To make one an oracle, {XFAIL_FIX}, then add it here:"
    return [*textwrap.wrap(why, 80), *(f"  {line}" for line in xfail_files(survey))]


def _folder_globs(folders: dict[str, int], layout: Layout | None = None) -> list[str]:
    """The globs of each top-most test folder (a folder's glob covers its subfolders)."""
    tops = [d for d in folders if not any(o != d and _holds(o, d) for o in folders)]
    return [glob for d in tops for glob in _folder_glob(d, layout)]


def _holds(folder: str, other: str) -> bool:
    return folder == "." or is_under(other, folder)


def _report(
    root: Path, layout: Layout, survey: Survey, created: list[str], skipped: list[str]
) -> str:
    lines = [f"andgate init: {root}"]
    lines += [f"  created  {p}" for p in created]
    lines += [f"  skipped  {p} (exists; not overwritten)" for p in skipped]
    if folders := _proposable_dirs(survey):
        found = ", ".join(f"{d} ({n})" for d, n in folders.items())
        lines.append(f"test folders found (suggested in the manifest, commented): {found}")
    if survey.marker_names:
        lines.append(f"pytest markers found: {', '.join(survey.marker_names)}")
    lines += [f"could not read {name}; its markers are not suggested" for name in survey.unreadable]
    if survey.generated:
        lines.append(f"generated files (generated_files): {', '.join(survey.generated)}")
    lines += collection_lines(
        survey.testpaths, (layout.oracle_dir, layout.property_dir), survey.left_out
    )
    if survey.plugin_files:
        lines.append(
            f"pytest plugin modules, their hooks allowed (production_scan.allow): "
            f"{', '.join(survey.plugin_files)}"
        )
    lines += [
        f"pytest plugin {plugin}: no file of this repository holds its module; allow its "
        "hooks where they live under production_scan.allow (docs/pytest-plugin-projects.md)"
        for plugin in survey.unfound_plugins
    ]
    if survey.xfails:
        lines.append(
            f"not proposed as oracles, {plural(len(survey.xfails), 'test file')} with xfail "
            f"items: {XFAIL_WHY}"
        )
        lines += [f"  {line}" for line in xfail_files(survey)]
        lines.append(f"  to make one an oracle: {XFAIL_FIX}, then add it to classes.oracle.globs")
    lines += next_steps(layout, survey)
    return "\n".join(lines) + "\n"


def next_steps(layout: Layout, survey: Survey) -> list[str]:
    """Numbered: what the first check would block on, and the command that fixes
    each; the last step is the pull request that adopts andgate."""
    kb = layout.known_bad_dir
    steps = [
        f"Review classes.oracle.globs in {layout.manifest} (init proposed the tests you have "
        "today) and list the people who may approve trust-root changes under owners.",
        "check blocks with NO_KNOWN_BAD until a fixture bites: `andgate known-bad mutants "
        f"--write 3` proposes some (artifacts/known_bad_proposals/); move one into {kb}/ "
        f"(or write one: {kb}/README.md).",
        "`andgate replay-known-bad`: every fixture must make an oracle test fail.",
        f"check blocks with NO_PROPERTY while require_property_class is true and no property "
        f"test has an invariant accepted in {layout.invariants_file}: add one, or set "
        "require_property_class: false until you do.",
        "`andgate lock update` (pins the files under fixtures_dir).",
        "`andgate doctor`: what the next check would trip on, and the fix for each.",
        "Commit only these files on a branch and open a pull request: that change adopts "
        "andgate (warning ADOPTING) and may not change production code; "
        "`andgate init --github` adds the workflow that gates it.",
    ]
    return ["Next steps:", *(f"  {i}. {step}" for i, step in enumerate(steps, 1))]
