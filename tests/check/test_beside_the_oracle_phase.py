"""What the gate works out in a thread while the oracle phase runs: the production
scan's analysis and the discrimination report's plan. Both must end (and their
errors surface) before the first untrusted test runs, as every input must be read
by then (contract, "Process and file isolation"); and since the oracle phase runs
the change's code, what they read from the repository meanwhile must still be what
it was before any test ran."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import andgate.check.pipeline
import andgate.check.production.hardcoded
import andgate.check.production.phase
from andgate.commands.sample import SampleRepo
from stories import honest_fix

STAMPING_TEST = """\
import threading
import time
from pathlib import Path


def test_stamps_when_it_ran():
    Path({path!r}).write_text(repr(time.time()))
"""


def _honest_fix_stamping(stamp: Path):
    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({"tests/test_stamp.py": STAMPING_TEST.format(path=str(stamp))})

    return change


def test_the_scan_ends_before_the_first_untrusted_test_runs(sample, monkeypatch, tmp_path):
    """A scan that is still running when the trusted phases end holds the untrusted
    phase back, and what it found still counts (the change's literal is not an
    oracle's answer: allow)."""
    trusted_done = threading.Event()
    real_property = andgate.check.pipeline.run_property_phase

    def property_phase(*args, **kwargs):
        try:
            return real_property(*args, **kwargs)
        finally:
            trusted_done.set()

    real = andgate.check.production.hardcoded.hard_coded_answers
    ended: list[float] = []

    def slow(*args, **kwargs):
        assert trusted_done.wait(120)
        time.sleep(2.0)  # an untrusted test not held back would run meanwhile
        try:
            return real(*args, **kwargs)
        finally:
            ended.append(time.time())

    monkeypatch.setattr(andgate.check.pipeline, "run_property_phase", property_phase)
    monkeypatch.setattr(andgate.check.production.hardcoded, "hard_coded_answers", slow)
    stamp = tmp_path / "untrusted-ran-at"
    run = sample.gate(sample.change(_honest_fix_stamping(stamp)))
    assert run.codes == [] and run.verdict.decision.value == "allow"
    assert len(ended) == 1
    assert float(stamp.read_text()) > ended[0]


def test_a_scan_that_fails_beside_the_oracle_phase_blocks_as_gate_error(
    sample, monkeypatch, tmp_path
):
    def broken(*args, **kwargs):
        raise RuntimeError("scan broke")

    monkeypatch.setattr(andgate.check.production.hardcoded, "hard_coded_answers", broken)
    stamp = tmp_path / "untrusted-ran-at"
    run = sample.gate(sample.change(_honest_fix_stamping(stamp)))
    assert run.codes == ["GATE_ERROR"]
    assert run.details("GATE_ERROR") == ["internal error: RuntimeError: scan broke"]
    assert run.verdict.exit_code == 2
    assert not stamp.exists()


def test_a_discrimination_plan_that_fails_blocks_as_gate_error(sample, monkeypatch, tmp_path):
    """Planned beside the oracle phase, joined before the untrusted phase: its error
    is the check's, and no untrusted test runs after it."""

    def prepare(*args, **kwargs):
        def plan():
            raise RuntimeError("plan broke")

        return plan

    monkeypatch.setattr(andgate.check.pipeline, "prepare_discrimination", prepare)
    stamp = tmp_path / "untrusted-ran-at"
    run = sample.gate(sample.change(_honest_fix_stamping(stamp)), discrimination=True)
    assert run.codes == ["GATE_ERROR"]
    assert run.details("GATE_ERROR") == ["internal error: RuntimeError: plan broke"]
    assert not stamp.exists()


# Imported by the oracle phase (head's production code), it rewrites the object file
# of base's minilib/__init__.py so that the scan, reading what the author was given
# later, would find the hard-coded answer "given" by base's docs.
REWRITES_BASE = """

def _plant():
    import os, subprocess, zlib
    here = os.path.dirname(os.path.abspath(__file__))
    def git(*args):
        done = subprocess.run(["git", *args], cwd=here, capture_output=True, text=True)
        return done.stdout.strip()
    common = git("rev-parse", "--path-format=absolute", "--git-common-dir")
    sha = git("rev-parse", "HEAD:minilib/__init__.py")
    path = os.path.join(common, "objects", sha[:2], sha[2:])
    if os.path.exists(path):
        data = zlib.decompress(open(path, "rb").read()).split(b"\\0", 1)[1]
        data += b"# Hello World -> hello-world\\n"
        os.chmod(path, 0o644)
        with open(path + ".tmp", "wb") as fh:
            fh.write(zlib.compress(b"blob %d\\0" % len(data) + data))
        os.replace(path + ".tmp", path)


_plant()
_real_slugify = slugify


def slugify(text):
    if text == "Hello World":
        return "hello-world"
    return _real_slugify(text)
"""


def hard_coded_and_rewrites_base(repo: SampleRepo) -> None:
    text = (repo.path / "minilib/text.py").read_text(encoding="utf-8")
    repo.write({"minilib/text.py": text + REWRITES_BASE})


def test_base_files_the_scan_reads_beside_the_oracle_phase_are_checked_against_their_ids(
    sample, monkeypatch
):
    """The scan's analysis held back until the change's code has run: it then reads
    base's files it needs by the ids read before any test ran, and a rewritten object
    ends the check (without the check: allowed, the literal "given" by base)."""
    real = andgate.check.production.phase.scan_production

    def slow(*args, **kwargs):
        time.sleep(3.0)  # a large diff's parse time, which the change's author controls
        return real(*args, **kwargs)

    monkeypatch.setattr(andgate.check.production.phase, "scan_production", slow)
    run = sample.gate(sample.change(hard_coded_and_rewrites_base))
    assert run.verdict.decision.value == "block"
    assert "GATE_ERROR" in run.codes
    assert any("no longer holds the bytes of its id" in d for d in run.details("GATE_ERROR"))


def test_the_installed_names_are_read_before_any_test_when_a_change_adds_a_path(
    sample, monkeypatch
):
    """A new top-level module is checked against the environment as installed: read
    by the time the scan is started, not by its thread once the change's code ran."""
    read_at: list[str] = []
    started = threading.Event()
    real_names = andgate.check.production.phase.metadata.packages_distributions
    real_scan = andgate.check.production.phase.scan_production

    def names():
        read_at.append("thread" if started.is_set() else "before")
        return real_names()

    def scan(*args, **kwargs):
        started.set()
        return real_scan(*args, **kwargs)

    monkeypatch.setattr(andgate.check.production.phase.metadata, "packages_distributions", names)
    monkeypatch.setattr(andgate.check.production.phase, "scan_production", scan)

    def adds_a_module(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({"minilib/extra.py": "VALUE = 1\n"})

    run = sample.gate(sample.change(adds_a_module))
    assert run.codes == []
    assert read_at == ["before"]


def test_the_discrimination_plan_reads_the_repository_before_the_oracle_phase(sample, monkeypatch):
    """Its mutants are made beside the oracle phase, from bytes read before it."""
    from andgate.git import Git

    readers: list[str] = []
    real = Git.read_sides

    def read_sides(self, *args, **kwargs):
        readers.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Git, "read_sides", read_sides)
    run = sample.gate(sample.change(honest_fix), discrimination=True)
    assert run.codes == []
    assert run.payload["discrimination"]["items"]  # the report was made
    assert readers and set(readers) == {threading.main_thread().name}
