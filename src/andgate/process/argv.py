"""The command line and environment of one pytest process: the bootstrap that loads
andgate's plugin first, the arguments, and the variables scrubbed from the environment.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from andgate.git import clean_env
from andgate.process.requests import TRUSTED_ROLES, RunRequest
from andgate.process.runner_files import HIDDEN_FROM_TESTS
from andgate.trust.pytest_config import root_config_file

# The bootstrap's own exit code when pytest (or andgate) cannot be imported in
# the environment the tests run with: a clear message, not a wall of traceback.
EXIT_CANNOT_IMPORT = 121


BOOTSTRAP = (
    "import json, os, sys\n"
    "try:\n"
    "    import andgate.plugin.hooks, andgate.plugin.redirect, pytest\n"
    "except ImportError as exc:\n"
    "    print('andgate-bootstrap:', exc, file=sys.stderr)\n"
    f"    raise SystemExit({EXIT_CANNOT_IMPORT})\n"
    "launch = json.loads(sys.stdin.readline())\n"
    "os.dup2(os.open(os.devnull, os.O_RDONLY), 0)\n"
    "sys.path.insert(0, os.getcwd())\n"
    "andgate.plugin.hooks.activate(launch['spec'])\n"
    "code = int(pytest.main(launch['args']))\n"
    "sys.stdout.flush()\n"
    "sys.stderr.flush()\n"
    "os._exit(code)\n"
)


# CI credentials that test code must never see (contract section 4), the CI runner's
# command files (what the step publishes: runner_files.py), plus the manifest's
# `scrub_env` globs.
SCRUBBED_ENV = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_*",
    "INPUT_*",
    "ANDGATE_*",
    *HIDDEN_FROM_TESTS,
)


# pytest configuration from the environment: a run reads the worktree's config file
# only (contract section 4; a CI step before andgate's controls the environment).
PYTEST_ENV_CONFIG = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")


def pytest_argv(
    request: RunRequest, spec_path: Path, junit: Path | None, worktree: Path, config: Path
) -> list[str]:
    """pytest's arguments. rootdir, config file and conftest boundary are the
    worktree's, given explicitly: pytest must never pick up a `pytest.ini` or a
    `conftest.py` that something left in a folder above the worktree."""
    argv = [f"--andgate-run={spec_path}", f"--rootdir={worktree}", "-c", str(config)]
    argv.append(f"--confcutdir={worktree}")
    argv += ["-p", "no:cacheprovider", "-rfE", "--continue-on-collection-errors"]
    if request.role in TRUSTED_ROLES:
        for name in request.environment.head_only_plugins:
            argv += ["-p", f"no:{name}"]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        argv += ["-p", "andgate.plugin.hooks"]
    if request.collect_only:
        # No test body runs, so pytest's assertion rewriting would buy nothing; in a
        # fresh worktree it is most of a collection's time (toolz's oracle files:
        # 0.49 s -> 0.07 s of collection).
        # Items, marks and parameters are the same; a module-level assert that fails
        # is still a collection error, without pytest's introspection.
        argv += ["--collect-only", "--assert=plain"]
    if request.exitfirst:
        argv.append("-x")
    if request.xdist_off:
        argv += ["-n", "0"]
    if request.failures_expected:
        # pytest's default long traceback parses the failing test's source (ast,
        # tokenize, inspect.getmodule over every module): two thirds of a replay's
        # test time, for a log nobody reads. The native traceback is formatted from
        # the frames alone, and pytest's one-line crash message is the same.
        argv.append("--tb=native")
    if junit is not None:
        argv.append(f"--junitxml={junit}")
    if request.only_items is not None:
        argv += selection_args(request.only_items)
    return argv


def selection_args(nodeids: Sequence[str]) -> list[str]:
    """pytest's positional arguments for these node ids: each one's function or
    method without its parameters (an id's parameters can hold characters pytest's
    argument parser splits on; the plugin keeps the exact ids), once each."""
    args: dict[str, None] = {}
    for nodeid in nodeids:
        holder, sep, name = nodeid.rpartition("::")
        if sep and name.endswith("]") and "[" in name:
            nodeid = f"{holder}{sep}{name[: name.index('[')]}"
        args.setdefault(nodeid)
    return list(args)


def config_file(worktree: Path, scratch: Path) -> Path:
    """The config file pytest would pick in the worktree's root, else an empty
    one of the gate's (never one from a folder above the worktree)."""
    chosen = root_config_file(worktree)
    if chosen is not None:
        return worktree / chosen
    empty = scratch / "no-config" / "pytest.ini"
    if not empty.exists():
        empty.parent.mkdir(parents=True, exist_ok=True)
        empty.write_text("[pytest]\n", encoding="utf-8")
    return empty


def test_environment(scrub_globs: Sequence[str] = ()) -> dict[str, str]:
    """os.environ for a pytest process: no GIT_* variable, no CI credential, none
    of the manifest's `scrub_env` names, no pytest configuration."""
    patterns = (*SCRUBBED_ENV, *PYTEST_ENV_CONFIG, *scrub_globs)
    env = {k: v for k, v in clean_env().items() if not any(fnmatchcase(k, p) for p in patterns)}
    env.pop("LC_ALL", None)
    # Bytecode caches only save work (pytest's rewritten-assert caches above
    # all): without them every process re-compiles the test suite and plugins.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
