"""action.yml, the workflow template and .pre-commit-hooks.yaml.

Parsed with PyYAML and checked for the secure pattern; the action's shell step and
the hook's entry are run for real with a fake `andgate` that prints its arguments.
"""

from __future__ import annotations

import importlib.resources
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
TEMPLATE = ROOT / "src" / "andgate" / "commands" / "templates" / "github_workflow.yml"
INPUTS = {"base", "head", "manifest", "jobs", "timeout", "approvals", "args", "github-token"}
OUTPUTS = {"verdict", "exit-code", "reasons", "artifacts"}
HEAD_SHA = "${{ github.event.pull_request.head.sha }}"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def triggers(workflow: dict[Any, Any]) -> Any:
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true


def run_steps(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in steps if "run" in s]


# -- action.yml -------------------------------------------------------------------------------


def test_the_action_is_composite_with_the_inputs_and_outputs():
    action = load(ACTION)
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == INPUTS
    assert action["inputs"]["approvals"]["default"] == "github-reviews"
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert set(action["outputs"]) == OUTPUTS
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.check.outputs.{name} }}}}"
        assert output["description"]


def test_no_expression_inside_any_run():
    for path in (ACTION, TEMPLATE):
        data = load(path)
        steps = data["runs"]["steps"] if "runs" in data else data["jobs"]["andgate"]["steps"]
        for step in run_steps(steps):
            assert "${{" not in step["run"], (path.name, step.get("name"))


def test_inputs_reach_the_shell_through_env():
    steps = load(ACTION)["runs"]["steps"]
    install, check = steps
    assert install["env"] == {"ACTION_PATH": "${{ github.action_path }}"}
    assert '"$ACTION_PATH"' in install["run"]
    assert check["id"] == "check"
    expected = {f"INPUT_{n.upper()}": f"${{{{ inputs.{n} }}}}" for n in INPUTS - {"github-token"}}
    expected["GITHUB_TOKEN"] = "${{ inputs.github-token }}"
    assert check["env"] == expected
    assert all(step["shell"] == "bash" for step in steps)


FAKE_ANDGATE = """#!/bin/sh
for arg in "$@"; do printf '%s\\n' "$arg"; done
printf 'token=%s\\n' "${GITHUB_TOKEN-<unset>}"
exit 1
"""
FAKE_GIT = """#!/bin/sh
if [ "$1" = merge-base ]; then
  [ "$2" = nohistory ] && exit 1
  echo "mb-of-$2-$3"
  exit 0
fi
exit 3
"""


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, text in (("andgate", FAKE_ANDGATE), ("git", FAKE_GIT)):
        (folder / name).write_text(text, encoding="utf-8")
        (folder / name).chmod(0o755)
    return folder


def run_check_step(fake_bin: Path, tmp_path: Path, **inputs: str) -> subprocess.CompletedProcess:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    step = load(ACTION)["runs"]["steps"][1]
    values = {"base": "b" * 40, "head": "h" * 40, "approvals": "github-reviews"} | inputs
    env = {"PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    for name in INPUTS - {"github-token"}:
        env[f"INPUT_{name.upper()}"] = values.get(name, "")
    env["GITHUB_TOKEN"] = "ghs_token"
    # the way the runner runs a bash step: bash --noprofile --norc -eo pipefail {0}
    script = tmp_path / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    return subprocess.run(
        [bash, "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_check_step_builds_andgates_arguments(fake_bin, tmp_path):
    done = run_check_step(fake_bin, tmp_path, manifest="ci/trust.yaml", jobs="4", timeout="600")
    assert done.returncode == 1  # andgate's exit code is the step's
    assert done.stdout.splitlines() == [
        "check",
        "--head",
        "h" * 40,
        "--base",
        f"mb-of-{'b' * 40}-{'h' * 40}",
        "--manifest",
        "ci/trust.yaml",
        "--jobs",
        "4",
        "--timeout",
        "600",
        "--approvals",
        "github-reviews",
        "token=ghs_token",
    ]


def test_without_a_merge_base_the_base_is_passed_as_given(fake_bin, tmp_path):
    done = run_check_step(fake_bin, tmp_path, base="nohistory")
    assert done.stdout.splitlines()[3:5] == ["--base", "nohistory"]


def test_approvals_none_passes_no_token(fake_bin, tmp_path):
    done = run_check_step(fake_bin, tmp_path, approvals="none")
    lines = done.stdout.splitlines()
    assert "--approvals" not in lines
    assert lines[-1] == "token=<unset>"


@pytest.mark.parametrize(
    "inputs",
    [{"approvals": "cli"}, {"head": "--upload-pack=evil"}, {"base": "-x"}, {"manifest": "-m"}],
)
def test_bad_inputs_stop_the_step(fake_bin, tmp_path, inputs):
    done = run_check_step(fake_bin, tmp_path, **inputs)
    assert done.returncode == 2
    assert done.stdout.startswith("::error title=andgate::")
    assert "check" not in done.stdout.splitlines()


def test_args_are_split_on_whitespace_and_never_evaluated(fake_bin, tmp_path):
    done = run_check_step(fake_bin, tmp_path, args='--today 2026-11-20  $(touch pwned) "a b" *')
    assert done.stdout.splitlines()[-8:-1] == [
        "--today",
        "2026-11-20",
        "$(touch",
        "pwned)",
        '"a',
        'b"',
        "*",
    ]
    assert not (tmp_path / "pwned").exists()


def test_the_action_and_template_pass_githubs_schemas():
    pytest.importorskip("check_jsonschema")
    for schema, path in (("vendor.github-actions", ACTION), ("vendor.github-workflows", TEMPLATE)):
        done = subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


# -- the workflow template --------------------------------------------------------------------


def test_the_template_ships_in_the_package():
    text = importlib.resources.files("andgate.commands").joinpath("templates/github_workflow.yml")
    assert text.read_text(encoding="utf-8") == TEMPLATE.read_text(encoding="utf-8")


def test_the_template_uses_the_secure_pattern():
    workflow = load(TEMPLATE)
    assert workflow["permissions"] == {}
    job = workflow["jobs"]["andgate"]
    assert job["permissions"] == {"contents": "read", "pull-requests": "read"}
    assert triggers(workflow) == {
        "pull_request": None,
        "pull_request_review": {"types": ["submitted", "dismissed"]},
    }
    steps = job["steps"]
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    assert checkout["with"]["persist-credentials"] is False
    assert checkout["with"]["ref"] == HEAD_SHA
    gate = next(s for s in steps if re.match(r"[\w-]+/andgate@", str(s.get("uses", ""))))
    assert gate["with"] == {"head": HEAD_SHA, "approvals": "github-reviews"}
    upload = steps[-1]
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert upload["if"] == "always()"
    assert steps.index(checkout) < steps.index(gate) < steps.index(upload)
    text = TEMPLATE.read_text(encoding="utf-8")
    assert "pull_request_target" not in text and "secrets." not in text


def test_the_github_guide_shows_the_template():
    guide = (ROOT / "docs" / "github.md").read_text(encoding="utf-8")
    assert TEMPLATE.read_text(encoding="utf-8") in guide


def test_the_template_installs_test_dependencies_and_says_how_to_pin_by_sha():
    workflow = load(TEMPLATE)
    steps = workflow["jobs"]["andgate"]["steps"]
    gate = next(s for s in steps if re.match(r"[\w-]+/andgate@", str(s.get("uses", ""))))
    install = next(s for s in steps if "pip install" in str(s.get("run", "")))
    assert steps.index(install) < steps.index(gate)
    assert ".[test]" in install["run"]
    text = TEMPLATE.read_text(encoding="utf-8")
    assert "andgate: EDIT" in text and "commit SHA" in text


def test_the_template_names_the_users_andgate_repository_for_them_to_fill_in():
    """No repository hosts andgate's releases: the action line is a placeholder with an
    EDIT comment above it, and `init --github` replaces exactly that line."""
    from andgate.commands.install_source import ACTION_PLACEHOLDER

    steps = load(TEMPLATE)["jobs"]["andgate"]["steps"]
    gate = next(s for s in steps if re.match(r"[\w-]+/andgate@", str(s.get("uses", ""))))
    assert gate["uses"] == ACTION_PLACEHOLDER
    lines = TEMPLATE.read_text(encoding="utf-8").splitlines()
    at = lines.index(f"      - uses: {ACTION_PLACEHOLDER}")
    comment = " ".join(lines[at - 4 : at])
    assert "andgate: EDIT" in comment and "repository you installed andgate" in comment


def test_the_action_installs_andgate_from_its_own_checkout_and_says_so():
    install = load(ACTION)["runs"]["steps"][0]
    assert install["run"].endswith('"$ACTION_PATH"')
    header = ACTION.read_text(encoding="utf-8").split("name:", 1)[0]
    assert "own checkout" in header and "OWNER/andgate@<40-hex" in header


# -- pre-commit -------------------------------------------------------------------------------


def test_the_pre_commit_hook():
    (hook,) = load(HOOKS)
    assert hook["id"] == "andgate"
    assert hook["language"] == "system"
    assert hook["pass_filenames"] is False
    assert hook["always_run"] is True
    assert hook["stages"] == ["pre-push", "manual"]


def test_the_local_hook_in_the_ci_guide_is_the_published_hook():
    """docs/ci.md's `repo: local` hook (it needs no andgate repository) is
    `.pre-commit-hooks.yaml`'s definition, key for key."""
    (hook,) = load(HOOKS)
    guide = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"(?ms)^```yaml\n(.*?)^```", guide)]
    configs = [b for b in blocks if isinstance(b, dict) and "repos" in b]
    local = next(r for c in configs for r in c["repos"] if r["repo"] == "local")
    (documented,) = local["hooks"]
    assert documented == {k: v for k, v in hook.items() if k != "description"}


@pytest.mark.parametrize(("to_ref", "head"), [("0123abc", "0123abc"), (None, "HEAD"), ("", "HEAD")])
def test_the_hook_gates_the_pushed_commit(fake_bin, tmp_path, to_ref, head):
    (hook,) = load(HOOKS)
    env = {"PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    if to_ref is not None:
        env["PRE_COMMIT_TO_REF"] = to_ref
    # pre-commit runs shlex.split(entry) + args (pass_filenames is false)
    argv = [*shlex.split(hook["entry"]), "--jobs", "2"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout.splitlines()[:-1] == ["check", "--head", head, "--jobs", "2"]
