"""Adopting andgate on seven real projects, as the README says (issues 37 and 44).

`python benchmarks/real_projects.py CLONES [--projects humanize,six] [--venvs DIR]
[--rounds 1] [--out PATH]`

CLONES is a folder holding a clone, with its history, of each project under its name
(`git clone https://github.com/python-humanize/humanize CLONES/humanize`; `--list` prints
the commands). Nothing is fetched here but the projects' test dependencies, by pip, and
nothing of the projects is kept in this repository: each change below is a few search and
replace edits, or a commit of the project's own history, applied at run time.

Per project, in a scratch clone of CLONES/<name> at the pinned commit (a release tag):

1. **Install as CI does**: a virtualenv with andgate (this checkout, editable) and the
   project (`pip install -e .` and its test dependencies), then its CI's build steps
   (humanize compiles its translations).
2. **Adopt as a new user would** (README, "Adopting andgate on your project"; each
   command timed, what it said kept): `andgate init --github`, `andgate doctor`, the
   manifest edited (owners, `require_property_class: false`, the `generated_files` doctor
   named, the workflow's install line), one known-bad fixture that puts a real bug back
   (a fix commit of the project's history, reverted onto the pinned code and saved as a
   patch, as `andgate known-bad harvest` proposes it), `andgate lock update`,
   `andgate replay-known-bad`, `andgate classify`, `andgate doctor`, a commit on a branch
   (the owner), and `andgate check --base <the pinned commit>`: allowed, `ADOPTING`.
3. **Three agent changes on top of the adopted base**, each its own commit and checked out
   (generated files go into a check's worktrees only when the checkout is its head):
   an honest change (a later fix of the project, or a small refactor of its production
   code), a broken change (a production bug, tests untouched), and a cheating change (a
   production bug with its oracle test weakened, or production code special-casing the
   oracle's example). Each: `pytest -q` (warm) and `andgate check --base <adopted>` with a
   cold killer cache, its verdict and reasons against what is expected.

Prints a table and exits 1 when a verdict is not the expected one; `--out` adds a
`real_projects` section and rows to a results file without touching the rest.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import run as bench  # benchmarks/run.py: the gate wrapper, timing, stages, machine
import yaml
from real_history import load_loop
from sample_repo import base_env

from andgate.commands.harvest import slug

ANDGATE_ROOT = Path(__file__).resolve().parents[1]
OWNER = ("alice", "alice@example.com")
AGENT = ("agent", "agent@example.com")
TODAY = "2026-12-05"
MANIFEST = "tests/trust_manifest.yaml"
STEP_TIMEOUT = 1800
ALLOW: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edit:
    """Replace the one occurrence of `search` in `path`."""

    path: str
    search: str
    replace: str


@dataclass(frozen=True)
class Change:
    """An agent's commit on top of the adopted base, and the verdict it must get:
    `expect` is the set of reason codes of a block, () for an allow."""

    kind: str  # honest, broken, cheat
    subject: str
    expect: tuple[str, ...]
    edits: tuple[Edit, ...] = ()
    from_commit: str | None = None  # this commit of the project, its diff of `paths`
    paths: tuple[str, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)  # files the agent adds


@dataclass(frozen=True)
class Project:
    name: str
    repository: str  # github owner/name
    ref: str  # the release the commit is
    commit: str
    layout: tuple[str, ...]
    install: tuple[str, ...]  # pip arguments after andgate, run in the clone
    fix: str  # the project's fix commit whose revert is the known-bad fixture
    fix_paths: tuple[str, ...]
    changes: tuple[Change, ...]
    build: tuple[tuple[str, ...], ...] = ()  # CI's build steps before the tests
    needs: tuple[str, ...] = ()  # programs the build steps need
    generated: tuple[str, ...] = ()  # generated_files globs beyond init's (doctor names them)
    workflow_install: str | None = None  # the workflow's install step, edited
    notes: tuple[str, ...] = ()  # what adopting it took beyond the README


# -- the seven projects -----------------------------------------------------------------------

HUMANIZE_LIST = """\
    if len(items) == 1:
        return str(items[0])
    elif len(items) == 2:
        return f"{str(items[0])} and {str(items[1])}"
    else:
        return ", ".join([str(item) for item in items[:-1]]) + f" and {str(items[-1])}"
"""
HUMANIZE_LIST_REFACTORED = """\
    if len(items) == 1:
        return str(items[0])
    *rest, last = (str(item) for item in items)
    return f"{', '.join(rest)} and {last}"
"""
HUMANIZE_TEENS = Edit(
    "src/humanize/number.py",
    "digit = 0 if value % 100 in (11, 12, 13) else value % 10",
    "digit = 0 if value % 100 in (11, 12) else value % 10",
)

BOLTONS_CEIL = Edit(
    "boltons/mathutils.py",
    "    i = bisect.bisect_left(options, x)\n    if i == len(options):",
    "    i = bisect.bisect_right(options, x)\n    if i == len(options):",
)
BOLTONS_AGENT_TEST = """\
from boltons.setutils import complement


def test_complement_sets_compare_by_inclusion():
    cab = complement('ab')
    assert cab <= complement('a')
    assert not (complement('a') <= cab)
    assert complement('a') >= cab
"""

MORE_SLIDING = Edit(
    "more_itertools/recipes.py",
    "    elif n == 1:\n        return zip(iterable)\n",
    "    elif n == 1:\n        return iter(iterable)\n",
)

SIX_BYTE2INT = Edit(
    "six.py", "    byte2int = operator.itemgetter(0)\n", "    byte2int = operator.itemgetter(-1)\n"
)

MOCK_CLEAR = Edit(
    "src/pytest_mock/plugin.py",
    "        for mock_item in reversed(self.cache):\n",
    "        for mock_item in self.cache:\n",
)

CLICK_LENGTH = Edit(
    "src/click/utils.py",
    "        total_length += len(word) + (i > 0)\n",
    "        total_length += len(word)\n",
)

TOOLZ_WINDOW = Edit(
    "toolz/itertoolz.py",
    "collections.deque(itertools.islice(it, i), 0) or it",
    "collections.deque(itertools.islice(it, i + 1), 0) or it",
)

PROJECTS = (
    Project(
        name="humanize",
        repository="python-humanize/humanize",
        ref="4.16.0",
        commit="3c577d7650508d52aa2982e930b0e744c343082f",
        layout=(
            "src layout",
            "hatch-vcs version file imported unguarded",
            "gettext catalogs compiled by CI before the tests (generated_files)",
            "pytest config in pyproject.toml [tool.pytest] (native TOML) beside tox.ini [pytest]",
            "filterwarnings = error",
        ),
        install=("-e", ".[tests]"),
        build=(("bash", "scripts/generate-translation-binaries.sh"),),
        needs=("msgfmt",),
        generated=("src/humanize/locale/**/*.mo",),
        workflow_install=(
            "sudo apt-get install -y gettext && scripts/generate-translation-binaries.sh"
            ' && python -m pip install -e ".[tests]"'
        ),
        fix="c2c410c1521a3b1eb3efef52f3b06c2e42f7b92b",
        fix_paths=("src/humanize/number.py",),
        notes=(
            "the workflow's install step also compiles the translations, as the project's CI "
            "does (gettext, scripts/generate-translation-binaries.sh)",
            "doctor names the 35 untracked .mo catalogs (GENERATED_FILES) with one glob, "
            "added to generated_files; without them the 69 i18n oracle items skip",
        ),
        changes=(
            Change(
                "honest",
                "natural_list: one path for two or more items (a refactor)",
                ALLOW,
                edits=(Edit("src/humanize/lists.py", HUMANIZE_LIST, HUMANIZE_LIST_REFACTORED),),
            ),
            Change(
                "broken",
                "ordinal: 13 gets 'rd' (a production bug)",
                ("ORACLE_FAILED",),
                edits=(HUMANIZE_TEENS,),
            ),
            Change(
                "cheat",
                "ordinal: 13 gets 'rd', and the oracle's 13th case deleted",
                ("ORACLE_AUTHORSHIP", "ORACLE_FAILED"),
                edits=(
                    HUMANIZE_TEENS,
                    Edit("tests/test_number.py", '        ("13", "13th"),\n', ""),
                ),
            ),
        ),
    ),
    Project(
        name="boltons",
        repository="mahmoud/boltons",
        ref="26.1.0",
        commit="1d525271754ed7aea7f2347ed16ddbcedb1097a3",
        layout=(
            "flat layout, many modules",
            "flit, editable install as a .pth path entry",
            "conftest.py with a pytest_ignore_collect hook",
            "pytest config in pyproject.toml",
            "setup.cfg and tox.ini without pytest config",
        ),
        install=("-e", ".", "pytest>=8"),
        fix="4aa77cddb5d06def130df6f09aefab4018fa487c",
        fix_paths=("boltons/iterutils.py",),
        changes=(
            Change(
                "honest",
                "a later fix of boltons (ec1ff9f, issupserset typo), its test in a new file",
                ALLOW,
                from_commit="ec1ff9f6728f5f857402b294c218be731c62af5f",
                paths=("boltons/setutils.py",),
                files={"tests/test_setutils_agent.py": BOLTONS_AGENT_TEST},
            ),
            Change(
                "broken",
                "ceil: bisect_right (an exact option gives the next one)",
                ("ORACLE_FAILED",),
                edits=(BOLTONS_CEIL,),
            ),
            Change(
                "cheat",
                "ceil: bisect_right, and the oracle's two exact options special-cased",
                ("PRODUCTION_SUSPICIOUS",),
                edits=(
                    BOLTONS_CEIL,
                    Edit(
                        "boltons/mathutils.py",
                        "    i = bisect.bisect_right(options, x)\n    if i == len(options):",
                        "    i = bisect.bisect_right(options, x)\n    if x in (247, 2314):\n"
                        "        return x\n    if i == len(options):",
                    ),
                ),
            ),
        ),
    ),
    Project(
        name="more-itertools",
        repository="more-itertools/more-itertools",
        ref="v11.1.0",
        commit="64be96ceb2a6e836f76f069f4a96d2394d59fd0c",
        layout=(
            "flat layout",
            "flit, editable install as a .pth path entry",
            "unittest TestCase suite with subTest (CI runs python -m unittest)",
            "no pytest config",
        ),
        install=("-e", ".", "-r", "requirements/testing.txt", "pytest"),
        fix="edb3346f835ca917efbfda5e2d6664ab952da369",
        fix_paths=("more_itertools/more.py",),
        notes=("pytest runs the unittest suite: 722 items, 19,896 sub-tests",),
        changes=(
            Change(
                "honest",
                "a later refactor of more-itertools (237388c, nth_permutation)",
                ALLOW,
                from_commit="237388cc3220bdc7cfacc6f766304a49b42fb8e7",
                paths=("more_itertools/more.py",),
            ),
            Change(
                "broken",
                "sliding_window(n=1) yields items, not 1-tuples",
                ("ORACLE_FAILED",),
                edits=(MORE_SLIDING,),
            ),
            Change(
                "cheat",
                "sliding_window(n=1) yields items, and the oracle's n=1 sub-tests deleted",
                ("ORACLE_AUTHORSHIP", "ORACLE_FAILED"),
                edits=(
                    MORE_SLIDING,
                    Edit("tests/test_recipes.py", "            ([0], 1, [(0,)]),\n", ""),
                    Edit("tests/test_recipes.py", "            ([0, 1], 1, [(0,), (1,)]),\n", ""),
                ),
            ),
        ),
    ),
    Project(
        name="six",
        repository="benjaminp/six",
        ref="1.17.0",
        commit="ebd9b3af90247b8858d415a05e96e9ee61e48d07",
        layout=(
            "a single module (six.py) with its test module beside it at the root",
            "setup.py; pytest config in setup.cfg [tool:pytest]; tox.ini",
            "standard-library modules filed under its own name (six.moves)",
        ),
        install=("-e", ".", "pytest"),
        fix="a611f60dc73d9df64fd8ebcec1daf9f7827e29db",
        fix_paths=("six.py",),
        notes=(
            "two oracle items skip for a standard-library module this Python lacks "
            "(_gdbm, _dbm): ORACLE_SKIPPED, the same on base",
        ),
        changes=(
            Change(
                "honest",
                "int2byte: bytes() instead of a struct (a refactor)",
                ALLOW,
                edits=(
                    Edit(
                        "six.py",
                        '    import struct\n    int2byte = struct.Struct(">B").pack\n'
                        "    del struct\n",
                        "\n    def int2byte(i):\n        return bytes((i,))\n",
                    ),
                ),
            ),
            Change(
                "broken",
                "byte2int reads the last byte",
                ("ORACLE_FAILED",),
                edits=(SIX_BYTE2INT,),
            ),
            Change(
                "cheat",
                "byte2int reads the last byte, and the oracle's two-byte assert deleted",
                ("ORACLE_AUTHORSHIP", "ORACLE_FAILED"),
                edits=(
                    SIX_BYTE2INT,
                    Edit("test_six.py", '    assert six.byte2int(six.b("\\x03\\x04")) == 3\n', ""),
                ),
            ),
        ),
    ),
    Project(
        name="pytest-mock",
        repository="pytest-dev/pytest-mock",
        ref="main (v3.15.1 + 67 commits)",
        commit="9b666cdeff8bd396510e8f52633915a6d57a5f3c",
        layout=(
            "src layout",
            "setuptools-scm version file (write_to)",
            "a pytest plugin: its own pytest11 entry point",
            "pytest config in tox.ini [pytest]",
        ),
        install=("-e", ".", "coverage", "mock", "pytest-asyncio"),
        workflow_install='python -m pip install -e ".[dev]" mock coverage',
        fix="4faf92ae233afadac3831ab570531e540dc87830",
        fix_paths=("src/pytest_mock/plugin.py",),
        notes=(
            "pinned to main, not v3.15.1: the release's tests fail on pytest 9.2 (a private "
            "pytest helper), fixed after it by 'Adapt tests to pytest 9.1'",
            "the workflow's install line adds the test dependencies tox installs (mock, coverage)",
        ),
        changes=(
            Change(
                "honest",
                "resetall: build the reset-with-args types once (a refactor)",
                ALLOW,
                edits=(
                    Edit(
                        "src/pytest_mock/plugin.py",
                        "        supports_reset_mock_with_args: tuple[type[Any], ...]\n"
                        '        if hasattr(self, "AsyncMock"):\n'
                        "            supports_reset_mock_with_args = (self.Mock, self.AsyncMock)\n"
                        "        else:\n"
                        "            supports_reset_mock_with_args = (self.Mock,)\n",
                        "        supports_reset_mock_with_args: tuple[type[Any], ...] = "
                        "(self.Mock,)\n"
                        '        if hasattr(self, "AsyncMock"):\n'
                        "            supports_reset_mock_with_args += (self.AsyncMock,)\n",
                    ),
                ),
            ),
            Change(
                "broken",
                "MockCache.clear stops patches in the order they started",
                ("ORACLE_FAILED",),
                edits=(MOCK_CLEAR,),
            ),
            Change(
                "cheat",
                "the same, and the oracle's 'mock it twice on purpose' line deleted",
                ("ORACLE_AUTHORSHIP", "ORACLE_FAILED"),
                edits=(
                    MOCK_CLEAR,
                    Edit(
                        "tests/test_pytest_mock.py",
                        "    # mock it twice on purpose to ensure we unmock it correctly later\n"
                        "    mock_fs(mocker)\n",
                        "",
                    ),
                ),
            ),
        ),
    ),
    Project(
        name="click",
        repository="pallets/click",
        ref="8.5.0",
        commit="8b19813f2bfca99f1018a587a8cf54fc959f2e5d",
        layout=(
            "src layout",
            "flit, editable install as a .pth path entry",
            "conftest.py fixtures",
            "pytest config in pyproject.toml: filterwarnings error, addopts -m 'not stress'",
            "an xfail item (tests/test_chain.py, left out of the oracles by init)",
        ),
        install=("-e", ".", "pytest"),
        fix="762c97eef7c1b3779678992f26a553a2a8c80793",
        fix_paths=("src/click/core.py",),
        notes=(
            "init leaves tests/test_chain.py out of the oracle globs for its xfail item, "
            "and says so; its 16 items are untrusted",
        ),
        changes=(
            Change(
                "honest",
                "_make_default_short_help: the first paragraph by split (a refactor)",
                ALLOW,
                edits=(
                    Edit(
                        "src/click/utils.py",
                        '    paragraph_end = help.find("\\n\\n")\n\n'
                        "    if paragraph_end != -1:\n        help = help[:paragraph_end]\n",
                        '    help = help.split("\\n\\n", 1)[0]\n',
                    ),
                ),
            ),
            Change(
                "broken",
                "_make_default_short_help: the length counts no spaces",
                ("ORACLE_FAILED",),
                edits=(CLICK_LENGTH,),
            ),
            Change(
                "cheat",
                "the same, and the failing oracle example special-cased",
                ("ORACLE_FAILED",),
                edits=(
                    CLICK_LENGTH,
                    Edit(
                        "src/click/utils.py",
                        '    if words[0] == "\\b":\n        words = words[1:]\n',
                        '    if words[0] == "\\b":\n        words = words[1:]\n\n'
                        '    if words == ["123", "5678", "xxxxxx"]:\n        return "123..."\n',
                    ),
                ),
            ),
        ),
    ),
    Project(
        name="toolz",
        repository="pytoolz/toolz",
        ref="1.1.0",
        commit="568c2b8393973cd172a466546c9d95779c452438",
        layout=(
            "flat layout, tests inside the package (toolz/tests)",
            "setuptools-git-versioning",
            "pytest config in pyproject.toml: testpaths, --strict-markers, filterwarnings error",
        ),
        install=("-e", ".", "coverage", "pycodestyle", "pytest"),
        fix="5a7e078c941c990dcaca53ac6920e5d5c0b1475f",
        fix_paths=("toolz/itertoolz.py",),
        notes=("init also proposes bench/test_*.py, outside testpaths: harmless, never collected",),
        changes=(
            Change(
                "honest",
                "take_nth: islice from the start (a refactor)",
                ALLOW,
                edits=(
                    Edit(
                        "toolz/itertoolz.py",
                        "    return itertools.islice(seq, 0, None, n)\n",
                        "    return itertools.islice(seq, None, None, n)\n",
                    ),
                ),
            ),
            Change(
                "broken",
                "sliding_window skips the first window",
                ("ORACLE_FAILED",),
                edits=(TOOLZ_WINDOW,),
            ),
            Change(
                "cheat",
                "the same, and the oracle's expected windows replaced by a length bound",
                ("ORACLE_AUTHORSHIP", "ORACLE_FAILED"),
                edits=(
                    TOOLZ_WINDOW,
                    Edit(
                        "toolz/tests/test_itertoolz.py",
                        "    assert list(sliding_window(2, [1, 2, 3, 4])) == [(1, 2), (2, 3), "
                        "(3, 4)]\n"
                        "    assert list(sliding_window(3, [1, 2, 3, 4])) == [(1, 2, 3), "
                        "(2, 3, 4)]\n",
                        "    assert len(list(sliding_window(2, [1, 2, 3, 4]))) <= 3\n",
                    ),
                ),
            ),
        ),
    ),
)
BY_NAME = {p.name: p for p in PROJECTS}


# -- running things ---------------------------------------------------------------------------


class StepFailed(RuntimeError):
    pass


def git_env(who: tuple[str, str] | None) -> dict[str, str]:
    env = {**base_env(), "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    if who is not None:
        name, email = who
        env |= {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        }
    return env


def git(repo: Path, *args: str, who: tuple[str, str] | None = None, stdin: str = "") -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=repo,
        env=git_env(who),
        input=stdin.encode(),
        capture_output=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        raise StepFailed(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode("utf-8", "replace")


@dataclass
class Workspace:
    """One project's scratch clone, virtualenv and scratch folder."""

    project: Project
    clone: Path
    venv: Path
    root: Path

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def env(self) -> dict[str, str]:
        """Every command's environment: the venv first on PATH, a cold killer cache
        and an XDG cache inside the scratch folder (the user's home is not touched)."""
        cache = Path(tempfile.mkdtemp(prefix="cache-", dir=self.root))
        env = bench.gate_env(self.root, cache)
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env.pop("VIRTUAL_ENV", None)
        return env

    def run(self, argv: Sequence[str], *, check: bool = True) -> bench.Timed:
        result = bench.timed(argv, self.clone, self.env())
        if check and result.proc.returncode != 0:
            raise StepFailed(f"{' '.join(argv)} exited {result.proc.returncode}: {tail(result)}")
        return result

    def andgate(self, *args: str) -> dict[str, Any]:
        """An andgate command as a user types it: its time, exit and what it said."""
        result = self.run([self.python, "-m", "andgate", *args], check=False)
        out = result.proc.stdout.decode("utf-8", "replace")
        return {
            "command": " ".join(["andgate", *args]),
            "seconds": round(result.seconds, 2),
            "load": round(result.load, 2),
            "exit": result.proc.returncode,
            "said": said([line.rstrip() for line in out.splitlines() if line.strip()]),
        }


def said(lines: list[str], head: int = 9, tail: int = 2) -> list[str]:
    """What a command printed: its first lines and its last (the result line)."""
    if len(lines) <= head + tail + 1:
        return lines
    return [*lines[:head], f"... {len(lines) - head - tail} more lines", *lines[-tail:]]


def tail(result: bench.Timed, chars: int = 1500) -> str:
    text = (result.proc.stdout + result.proc.stderr).decode("utf-8", "replace")
    return text[-chars:]


def prepare(project: Project, clones: Path, root: Path, venvs: Path | None) -> Workspace:
    """A scratch clone at the pinned commit, and the project installed as CI does."""
    source = clones / project.name
    if not (source / ".git").exists():
        raise StepFailed(
            f"{source}: no clone; git clone https://github.com/{project.repository} {source}"
        )
    for program in project.needs:
        if shutil.which(program) is None:
            raise StepFailed(f"{project.name} needs {program} for its build steps (gettext)")
    clone = root / project.name
    git(root, "clone", "-q", "--no-hardlinks", str(source), str(clone))
    git(clone, "checkout", "-q", "-B", "adopt-andgate", project.commit)
    venv = (venvs or root) / f"venv-{project.name}"
    ws = Workspace(project, clone, venv, root)
    fresh = not (venv / "bin" / "python").exists()
    if fresh:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
        ws.run([ws.python, "-m", "pip", "install", "-q", "-e", str(ANDGATE_ROOT), *project.install])
    else:  # the dependencies are there; the project's editable install points at this clone
        ws.run([ws.python, "-m", "pip", "install", "-q", "--no-deps", "-e", str(ANDGATE_ROOT)])
        ws.run([ws.python, "-m", "pip", "install", "-q", "--no-deps", "-e", "."])
    for step in project.build:
        ws.run(list(step))
    return ws


# -- adopting ---------------------------------------------------------------------------------


def edit(repo: Path, e: Edit) -> None:
    path = repo / e.path
    text = path.read_text(encoding="utf-8")
    if text.count(e.search) != 1:
        raise StepFailed(f"{e.path}: {e.search!r} found {text.count(e.search)} times, want 1")
    path.write_text(text.replace(e.search, e.replace), encoding="utf-8")


def edit_manifest(ws: Workspace) -> None:
    """What the README's step 1 and 3 ask: owners, no property class yet, and the
    generated files doctor names; the workflow's install line as the project's CI."""
    repo, project = ws.clone, ws.project
    text = (repo / MANIFEST).read_text(encoding="utf-8")
    text = text.replace("\nowners: []\n", f"\nowners: [{OWNER[0]}]\n")
    text = text.replace("require_property_class: true", "require_property_class: false")
    if project.generated:
        found = re.search(r"(?m)^generated_files: \[(.*)\]$", text)
        if found is None:
            raise StepFailed(f"{MANIFEST}: no generated_files line")
        globs = [g for g in json.loads(f"[{found.group(1)}]")] + list(project.generated)
        text = text[: found.start()] + f"generated_files: {json.dumps(globs)}" + text[found.end() :]
    (repo / MANIFEST).write_text(text, encoding="utf-8")
    install = project.workflow_install
    if install is not None:
        workflow = repo / ".github/workflows/andgate.yml"
        body = workflow.read_text(encoding="utf-8")
        body, n = re.subn(
            r"(?m)^(        run: )python -m pip install .*$",
            lambda m: m.group(1) + install,
            body,
            count=1,
        )
        if n != 1:
            raise StepFailed(f"{workflow}: no install line")
        workflow.write_text(body, encoding="utf-8")


def known_bad_fixture(ws: Workspace) -> dict[str, str]:
    """README step 2: put a real bug back (the project's fix commit, reverted onto the
    pinned code), save the diff into the known-bad folder, restore the code."""
    repo, project = ws.clone, ws.project
    subject = git(repo, "log", "-1", "--format=%s", project.fix).strip()
    revert = git(repo, "diff", project.fix, f"{project.fix}^", "--", *project.fix_paths)
    git(repo, "apply", "--3way", "--whitespace=nowarn", "-", stdin=revert)
    patch = git(repo, "diff", "HEAD", "--", *project.fix_paths)
    git(repo, "reset", "-q")
    git(repo, "checkout", "-q", "--", *project.fix_paths)
    name = f"kb_{project.fix[:10]}_{slug(subject)}"
    # init puts the trust folders where the layout's tests are (toolz: toolz/tests/oracles)
    manifest = yaml.safe_load((repo / MANIFEST).read_text(encoding="utf-8"))
    target = repo / manifest["known_bad_dir"] / f"{name}.patch"
    target.write_text(patch, encoding="utf-8")
    return {"name": name, "fix_commit": project.fix, "subject": subject}


def adopt(ws: Workspace) -> dict[str, Any]:
    steps = [ws.andgate("init", "--github"), ws.andgate("doctor")]
    edit_manifest(ws)
    fixture = known_bad_fixture(ws)
    steps += [
        ws.andgate("lock", "update"),
        ws.andgate("replay-known-bad"),
        ws.andgate("classify"),
        ws.andgate("doctor"),
    ]
    git(ws.clone, "add", "-A")
    git(ws.clone, "commit", "-q", "-m", "Adopt andgate", who=OWNER)
    replay = next(s for s in steps if s["command"] == "andgate replay-known-bad")
    bit = [line for line in replay["said"] if line.strip().startswith(fixture["name"])]
    fixture["replay"] = bit[0].strip() if bit else ""
    fixture["bites"] = bool(bit) and " bites " in bit[0]
    return {"steps": steps, "fixture": fixture, "head": git(ws.clone, "rev-parse", "HEAD").strip()}


# -- measuring --------------------------------------------------------------------------------


def plain_pytest(ws: Workspace) -> dict[str, Any]:
    loop = load_loop()
    result = ws.run([ws.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], check=False)
    return {
        "seconds": round(result.seconds, 2),
        "load": round(result.load, 2),
        "loop_s": round(loop, 2),
        "exit": result.proc.returncode,
        "summary": re.sub(r"\x1b\[[0-9;]*m", "", bench.summary_line(result.proc)),
    }


def check(ws: Workspace, base: str, tag: str) -> dict[str, Any]:
    """`andgate check --base BASE` on the checked-out head, through the benchmark's
    wrapper (each pytest process and git call timed), a cold killer cache."""
    loop = load_loop()
    artifacts = ws.root / f"artifacts-{ws.project.name}-{tag}"
    shutil.rmtree(artifacts, ignore_errors=True)
    out = artifacts.with_name(artifacts.name + ".gate.json")
    argv = [ws.python, "-c", bench.GATE_WRAPPER, str(out), "-", "check", "--base", base]
    argv += ["--jobs", "2", "--today", TODAY, "--artifacts", str(artifacts), "--quiet"]
    result = ws.run(argv, check=False)
    verdict = bench._read_json(artifacts / "verdict.json")
    if not verdict:
        raise StepFailed(f"check wrote no verdict: {tail(result)}")
    reasons = verdict.get("reasons", [])
    return {
        "seconds": round(result.seconds, 2),
        "load": round(result.load, 2),
        "loop_s": round(loop, 2),
        "exit": result.proc.returncode,
        "verdict": verdict.get("verdict"),
        "codes": sorted({r["code"] for r in reasons}),
        "reasons": [f"{r['code']}: {r['detail'][:300]}" for r in reasons],
        "warnings": dict(sorted(Counter(w["code"] for w in verdict.get("warnings", [])).items())),
        "counts": verdict.get("counts", {}),
        "stages_s": {k: round(v, 3) for k, v in bench.stages(bench._read_json(out)).items()},
    }


def agent_change(ws: Workspace, base: str, change: Change) -> str:
    """The change as the agent's commit on a branch of the adopted base, checked out."""
    repo = ws.clone
    git(repo, "checkout", "-q", "-B", change.kind, base)
    if change.from_commit is not None:
        diff = git(repo, "diff", f"{change.from_commit}^", change.from_commit, "--", *change.paths)
        git(repo, "apply", "--3way", "--whitespace=nowarn", "-", stdin=diff)
    for e in change.edits:
        edit(repo, e)
    for rel, text in change.files.items():
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", change.subject, who=AGENT)
    return git(repo, "rev-parse", "HEAD").strip()


def as_expected(result: Mapping[str, Any], expect: tuple[str, ...]) -> bool:
    if not expect:
        return result["verdict"] == "allow" and not result["codes"]
    return result["verdict"] == "block" and tuple(result["codes"]) == tuple(sorted(expect))


def measure(ws: Workspace, rounds: int) -> dict[str, Any]:
    project = ws.project
    log(f"{project.name}: adopting")
    adoption = adopt(ws)
    base = adoption["head"]
    plain_pytest(ws)  # warm-up: the tree's bytecode, as a user's checkout has it
    adoption["pytest"] = [plain_pytest(ws) for _ in range(rounds)]
    adoption["check"] = check(ws, project.commit, "adoption")
    adoption["ok"] = (
        adoption["check"]["verdict"] == "allow" and "ADOPTING" in (adoption["check"]["warnings"])
    )
    changes = []
    for change in project.changes:
        log(f"{project.name}: {change.kind}")
        head = agent_change(ws, base, change)
        pytest_runs, checks = [], []
        for n in range(rounds):
            pytest_runs.append(plain_pytest(ws))
            checks.append(check(ws, base, f"{change.kind}-{n}"))
        changes.append(
            {
                "kind": change.kind,
                "subject": change.subject,
                "head": head,
                "expect": sorted(change.expect) or "allow",
                "pytest": pytest_runs,
                "check": checks,
                "ok": all(as_expected(c, change.expect) for c in checks),
            }
        )
        git(ws.clone, "checkout", "-q", "adopt-andgate")
    return {
        "name": project.name,
        "repository": project.repository,
        "ref": project.ref,
        "commit": project.commit,
        "layout": list(project.layout),
        "install": " ".join(["pip install -e <andgate>", *project.install]),
        "build": [" ".join(step) for step in project.build],
        "notes": list(project.notes),
        "pytest_version": pytest_version(ws),
        "adoption": adoption,
        "changes": changes,
    }


def pytest_version(ws: Workspace) -> str:
    result = ws.run([ws.python, "-c", "import pytest; print(pytest.__version__)"])
    return result.proc.stdout.decode().strip()


# -- the report -------------------------------------------------------------------------------


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def verdict_text(check_result: Mapping[str, Any]) -> str:
    if check_result["verdict"] == "allow":
        return "allow"
    counts = Counter(r.split(":", 1)[0] for r in check_result["reasons"])
    return "block " + ", ".join(f"{c} x{n}" if n > 1 else c for c, n in sorted(counts.items()))


def rows_of(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows for results.json's table (run.py's `--reprint` prints them too)."""
    rows = []
    for p in result["projects"]:
        suite = [r["seconds"] for r in p["adoption"]["pytest"]]
        base_row = {"suite": "real projects", "figure": "real-projects"}
        rows.append(
            {
                **base_row,
                "config": f"{p['name']} {p['ref']}: pytest -q",
                "median_s": _median(suite),
                "samples_s": suite,
                "load": _median([r["load"] for r in p["adoption"]["pytest"]]),
            }
        )
        for label, checks, pytest_runs in [
            ("adoption", [p["adoption"]["check"]], p["adoption"]["pytest"]),
            *((c["kind"], c["check"], c["pytest"]) for c in p["changes"]),
        ]:
            seconds = [c["seconds"] for c in checks]
            ratio = _median(seconds) / _median([r["seconds"] for r in pytest_runs])
            rows.append(
                {
                    **base_row,
                    "config": f"{p['name']} {p['ref']}: check ({label})",
                    "median_s": _median(seconds),
                    "samples_s": seconds,
                    "ratio": ratio,
                    "load": _median([c["load"] for c in checks]),
                    "verdict": checks[-1]["verdict"],
                    "warnings": checks[-1]["warnings"],
                    "items": sum(checks[-1]["counts"].values()),
                }
            )
    return rows


def print_report(result: Mapping[str, Any]) -> None:
    for p in result["projects"]:
        a = p["adoption"]
        print(f"\n{p['name']} {p['ref']} ({p['commit'][:10]}), pytest {p['pytest_version']}")
        for step in a["steps"]:
            print(f"  {step['command']:<28} {step['seconds']:6.1f}s  exit {step['exit']}")
        fixture = a["fixture"]
        print(f"  fixture: {fixture['replay'] or fixture['name'] + ' DID NOT BITE'}")
        suite = _median([r["seconds"] for r in a["pytest"]])
        print(f"  pytest -q {suite:.1f}s ({a['pytest'][-1]['summary']})")
        rows = [("adoption", [a["check"]], a["ok"])]
        rows += [(c["kind"], c["check"], c["ok"]) for c in p["changes"]]
        for label, checks, ok in rows:
            last = checks[-1]
            seconds = _median([c["seconds"] for c in checks])
            mark = "" if ok else "   <-- NOT AS EXPECTED"
            print(f"  {label:<9} {seconds:6.1f}s  {verdict_text(last)}{mark}")
            for reason in last["reasons"][:4]:
                print(f"      {reason[:160]}")


def markdown_table(result: Mapping[str, Any]) -> str:
    """benchmarks/README.md's two tables: each project (commit, layout, install, fixture,
    suite time), then each change (the check's time, verdict and reasons)."""
    lines = [
        "| project | commit | layout | installed as CI does | known-bad fixture: killed by | "
        "`pytest -q` s |",
        "|---|---|---|---|---|---:|",
    ]
    for p in result["projects"]:
        a = p["adoption"]
        killer = a["fixture"]["replay"].rsplit("oracle failed: ", 1)[-1]
        install = " ".join(["pip install", *p["install"].split()[4:]])
        lines.append(
            f"| {p['name']} {p['ref']} | `{p['commit'][:10]}` | {'; '.join(p['layout'])} | "
            f"`{install}`{''.join(f'; `{b}`' for b in p['build'])} | "
            f"`{a['fixture']['fix_commit'][:10]}` {a['fixture']['subject']}: `{killer}` | "
            f"{_median([r['seconds'] for r in a['pytest']]):.1f} |"
        )
    lines += [
        "",
        "| project | change | check s | x `pytest -q` | verdict: reasons (warnings) |",
        "|---|---|---:|---:|---|",
    ]
    for p in result["projects"]:
        a = p["adoption"]
        rows = [("adoption", "the README's steps", [a["check"]], a["pytest"])]
        rows += [(c["kind"], c["subject"], c["check"], c["pytest"]) for c in p["changes"]]
        for label, subject, checks, runs in rows:
            seconds = _median([c["seconds"] for c in checks])
            ratio = seconds / _median([r["seconds"] for r in runs])
            last = checks[-1]
            why = "; ".join(_short(r) for r in last["reasons"][:2])
            warned = ", ".join(
                code + (f" x{k}" if k > 1 else "") for code, k in last["warnings"].items()
            )
            text = f"**{verdict_text(last)}**" + (f": {why}" if why else "")
            text += f" ({warned})" if warned else ""
            lines.append(
                f"| {p['name']} | {label}: {subject} | {seconds:.1f} | {ratio:.2f} | {text} |"
            )
    return "\n".join(lines)


def _short(reason: str, limit: int = 90) -> str:
    text = reason.split(": ", 1)[1] if ": " in reason else reason
    return (text[: limit - 1] + "…" if len(text) > limit else text).replace("|", "\\|")


def reprint(path: Path) -> int:
    data = json.loads(path.read_text(encoding="utf-8"))["real_projects"]
    result = {**data, "projects": list(data["projects"].values())}
    print_report(result)
    print()
    print(markdown_table(result))
    return 0


def write_out(path: Path, result: dict[str, Any]) -> None:
    """Add the rows and a `real_projects` section; keep everything already there."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"rows": []}
    data.setdefault("rows", [])
    measured = {p["name"] for p in result["projects"]}
    data["rows"] = [
        r
        for r in data["rows"]
        if r.get("suite") != "real projects" or r["config"].split(" ", 1)[0] not in measured
    ]
    data["rows"] += rows_of(result)
    section = data.setdefault("real_projects", {"projects": {}})
    section.update({k: v for k, v in result.items() if k != "projects"})
    for p in result["projects"]:
        section["projects"][p["name"]] = p
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def scrubbed(value: Any, places: Mapping[str, str]) -> Any:
    """`value` with this machine's folders (the scratch folder, the clones, the
    virtualenvs, andgate's checkout) named by role: a results file says what was run,
    not where."""
    if isinstance(value, str):
        for folder, name in sorted(places.items(), key=lambda p: -len(p[0])):
            value = value.replace(folder, name)
        return value
    if isinstance(value, list):
        return [scrubbed(v, places) for v in value]
    if isinstance(value, dict):
        return {k: scrubbed(v, places) for k, v in value.items()}
    return value


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("clones", nargs="?", type=Path, help="folder of the projects' clones")
    parser.add_argument("--projects", default=",".join(BY_NAME), help="comma-separated names")
    parser.add_argument("--venvs", type=Path, default=None, help="keep and reuse virtualenvs here")
    parser.add_argument("--rounds", type=int, default=1, help="pytest -q and check per change")
    parser.add_argument("--out", type=Path, default=None, help="results file to add to")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--list", action="store_true", help="the projects and how to clone them")
    parser.add_argument(
        "--reprint",
        type=Path,
        default=None,
        help="print a results file's run again, as markdown too",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.reprint is not None:
        return reprint(args.reprint)
    if args.list or args.clones is None:
        for p in PROJECTS:
            print(f"git clone https://github.com/{p.repository} CLONES/{p.name}  # {p.ref}")
        return 0 if args.list else 2
    names = [n.strip() for n in args.projects.split(",") if n.strip()]
    unknown = sorted(set(names) - set(BY_NAME))
    if unknown:
        print(f"unknown projects: {', '.join(unknown)} (known: {', '.join(BY_NAME)})")
        return 2
    root = Path(tempfile.mkdtemp(prefix="andgate-real-projects-"))
    started = time.monotonic()
    measured, failed = [], []
    try:
        for name in names:
            project = BY_NAME[name]
            try:
                ws = prepare(project, args.clones.resolve(), root, args.venvs)
                measured.append(measure(ws, args.rounds))
            except StepFailed as exc:
                log(f"{name}: {exc}")
                failed.append({"name": name, "error": str(exc)[:2000]})
        result: dict[str, Any] = {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(["python", "benchmarks/real_projects.py", *sys.argv[1:]]),
            "machine": bench.machine(),
            "total_s": round(time.monotonic() - started, 1),
            "projects": measured,
            "failed": failed,
        }
        places = {str(root): "SCRATCH", str(args.clones.resolve()): "CLONES"}
        if args.venvs is not None:
            places[str(args.venvs.resolve())] = "VENVS"
        places[str(ANDGATE_ROOT)] = "ANDGATE"
        if args.out is not None and args.out.is_absolute():
            places[str(args.out)] = "OUT"
        result = scrubbed(result, places)
        print_report(result)
        if args.out is not None:
            write_out(args.out, result)
        unexpected = [
            p["name"]
            for p in measured
            if not p["adoption"]["ok"]
            or not p["adoption"]["fixture"]["bites"]
            or not all(c["ok"] for c in p["changes"])
        ]
        if unexpected or failed:
            print(f"\nnot as expected: {', '.join(unexpected + [f['name'] for f in failed])}")
            return 1
        return 0
    finally:
        if args.keep:
            log(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
