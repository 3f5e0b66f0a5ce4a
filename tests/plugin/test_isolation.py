"""Test code cannot reach into the gate (issue 28): the gate is not dumpable, and every
test process, Popen's or the fork server's, runs with no_new_privs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from andgate.commands import cli
from andgate.plugin import hooks as plugin
from andgate.plugin import isolation
from andgate.plugin.classify import Rules
from andgate.process import forkclient
from andgate.process.forkclient import stop_fork_server
from andgate.process.requests import RunRequest
from andgate.process.run import run_pytest

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="prctl is Linux only")

ASK = (
    "from andgate.plugin import isolation as i\n"
    "before = (i.is_dumpable(), i.has_no_new_privs())\n"
    "{call}\n"
    "print(before, (i.is_dumpable(), i.has_no_new_privs()))\n"
)


def in_a_fresh_process(call: str) -> str:
    code = ASK.format(call=call)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=True)
    return out.stdout.decode().strip()


@linux_only
def test_make_undumpable_makes_the_process_undumpable() -> None:
    assert in_a_fresh_process("i.make_undumpable()") == "(True, False) (False, False)"


@linux_only
def test_no_new_privs_sets_the_flag_for_good() -> None:
    assert in_a_fresh_process("i.no_new_privs()") == "(True, False) (True, True)"


def test_elsewhere_both_are_no_ops_that_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolation.sys, "platform", "darwin")
    assert isolation.make_undumpable() is False
    assert isolation.no_new_privs() is False
    assert isolation.is_dumpable() is None


def test_every_command_makes_the_gate_undumpable(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(isolation, "make_undumpable", lambda: calls.append("undumpable"))
    from andgate.commands import lock

    monkeypatch.setattr(lock, "run_lock_verify", lambda *args, **kwargs: 0)
    assert cli.main(["lock", "verify"]) == 0
    assert calls == ["undumpable"]


def test_the_bootstrap_sets_no_new_privs_before_the_redirect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(isolation, "no_new_privs", lambda: calls.append("no_new_privs"))
    monkeypatch.setattr(plugin, "redirect_imports", lambda spec: calls.append("redirect"))
    plugin.activate("spec.json")
    assert calls == ["no_new_privs", "redirect"]


PROBE = """\
import json


def test_probe():
    status = dict(
        line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line
    )
    with open({out!r}, "w") as fh:
        json.dump({{"no_new_privs": status["NoNewPrivs"].strip()}}, fh)
"""


@linux_only
@pytest.mark.slow
@pytest.mark.parametrize("fork_server", ["1", "0"])
def test_a_test_process_runs_with_no_new_privs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork_server: str
) -> None:
    monkeypatch.setenv("ANDGATE_FORK_SERVER", fork_server)
    stop_fork_server()
    out = tmp_path / "facts.json"
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "tests/test_probe.py").write_text(PROBE.format(out=str(out)), encoding="utf-8")
    name = "tests/test_probe.py"
    request = RunRequest("oracle", "oracle", Rules(oracle_files=frozenset({name})), (name,))
    try:
        result = run_pytest(request, root, tmp_path / "scratch", 120)
        forked = bool(forkclient._SERVER.get("server"))
    finally:
        stop_fork_server()
    assert result.error is None, result.error
    assert forked is (fork_server == "1")
    assert json.loads(out.read_text()) == {"no_new_privs": "1"}
