"""What the gate decides from git alone, before any pytest process starts: base's
manifest (and what it names), the approvals it accepts, the production scan and the
authorship sort, run on the sample repository as `check._gate` runs them, then the
pure verdict on those facts. The end-to-end rows of the same families are in
`tests/end_to_end/test_check.py` and `tests/check/test_production_cheats.py`."""

from __future__ import annotations

import dataclasses
import datetime as dt

from andgate.check.options import CheckOptions
from andgate.check.oracle.replay import known_bad_facts
from andgate.check.pipeline import _base_config, _commits
from andgate.check.production.phase import scan_change
from andgate.check.state import CheckState
from andgate.commands.sample import SAMPLE_TODAY, SampleRepo
from andgate.git import Git
from andgate.records import ClassFacts, Decision, ItemResult, Outcome
from andgate.trust.authorship import oracle_file_rule, sort_changes
from andgate.trust.github import approved_logins
from andgate.trust.paths import config_changes
from andgate.verdict import authorship_findings, decide, known_bad_findings
from stories import honest_fix
from test_production_cheats import _cheat
from verdict_facts import CLEAN


@dataclasses.dataclass
class BeforeTests:
    state: CheckState
    config: object
    changes: object  # ChangeFacts, as the authorship phase sorts them
    scan: object


def before_tests(sample, head: str, approved_by: tuple[str, ...] = ()) -> BeforeTests:
    """`check._gate` up to the test phases, then its authorship sort (with oracle
    globs, as the sample's manifest has no oracle markers)."""
    opts = CheckOptions(
        repo=sample.path,
        base=sample.base,
        head=head,
        approved_by=approved_by,
        today=dt.date.fromisoformat(SAMPLE_TODAY),
    )
    state = CheckState()
    git = Git(sample.path)
    base, head = _commits(git, opts, state)
    config = _base_config(git, opts, state, base)
    changes = git.diff_raw(base, head)
    differs = config_changes(
        changes, lambda p: git.read_blob(base, p), lambda p: git.read_blob(head, p)
    )
    scan = scan_change(git, base, head, changes, config, differs)
    sorted_changes = sort_changes(
        changes,
        config.manifest,
        is_oracle_file=oracle_file_rule(config.manifest, ()),
        config_differs=differs,
        approved_by=approved_logins(state.approvals),
        test_side=config.test_side,
        scan=scan,
    )
    return BeforeTests(state, config, sorted_changes, scan)


def test_the_production_scan_allow_list_is_read_from_base(sample):
    """harness_reference allowed for minilib/mathx.py by base's manifest: not
    suspicious; the same allow-list added by the change itself does not count."""
    head = sample.change(_cheat)
    found = before_tests(sample, head).changes
    assert [f.code.value for f in authorship_findings(found)] == ["PRODUCTION_SUSPICIOUS"]
    assert any(
        d.startswith("minilib/mathx.py:") and "harness_reference" in d for d in found.suspicious
    )

    allow = 'production_scan:\n  allow:\n    "minilib/mathx.py": [harness_reference]\n'

    def cheat_and_allow(repo: SampleRepo) -> None:
        _cheat(repo)
        with (repo.path / "tests/trust_manifest.yaml").open("a") as manifest:
            manifest.write(allow)

    by_head = before_tests(sample, sample.change(cheat_and_allow))
    assert by_head.scan.suspicious == found.suspicious  # head's manifest is never read

    sample.repo.run("checkout", "-q", "--detach", sample.base)
    with (sample.path / "tests/trust_manifest.yaml").open("a") as manifest:
        manifest.write(allow)
    sample.base = sample.repo.commit("allow harness references in mathx")
    allowed = before_tests(sample, sample.change(_cheat)).changes
    assert allowed.suspicious == ()
    assert authorship_findings(allowed) == []


def test_no_known_bad_fixture_is_no_known_bad(sample):
    sample.repo.delete("tests/oracles/known_bad/kb_chunk_drops_tail.patch")  # its only one
    sample.base = sample.repo.commit("drop fixtures")
    config = before_tests(sample, sample.change(honest_fix)).config
    assert config.known_bad == ()
    facts = known_bad_facts(config, [], has_oracle=True)  # what the oracle phase records
    assert [f.code.value for f in known_bad_findings(facts)] == ["NO_KNOWN_BAD"]
    verdict = decide(dataclasses.replace(CLEAN, known_bad=facts))
    assert verdict.decision is Decision.BLOCK and not verdict.bits["known_bad_ok"]


def test_an_untrusted_failure_is_a_warning_when_base_is_not_fail_closed(sample):
    sample.repo.edit(
        "tests/trust_manifest.yaml", "fail_closed_untrusted: true", "fail_closed_untrusted: false"
    )
    sample.base = sample.repo.commit("relax")
    head = sample.change(
        lambda r: r.write({"tests/test_agent.py": "def test_wrong_belief():\n    assert 0\n"})
    )
    facts = before_tests(sample, head).state.facts()
    assert facts.fail_closed_untrusted is False
    failing = ClassFacts(
        results=(ItemResult("tests/test_agent.py::test_wrong_belief", Outcome.FAILED),)
    )
    verdict = decide(
        dataclasses.replace(
            CLEAN, untrusted=failing, fail_closed_untrusted=facts.fail_closed_untrusted
        )
    )
    assert verdict.decision is Decision.ALLOW
    assert [f.code.value for f in verdict.warnings] == ["UNTRUSTED_FAILED"]


def test_manifest_edits_and_a_non_owners_approval_are_ignored_and_said(sample):
    """Head's manifest is never read (version 2 would be MANIFEST_INVALID), and
    mallory's approval does not lift the trust-root change."""

    def edit(repo: SampleRepo) -> None:
        repo.edit("tests/trust_manifest.yaml", "max_freeze_days: 28", "max_freeze_days: 90")
        repo.edit("tests/trust_manifest.yaml", "version: 1", "version: 2")

    found = before_tests(sample, sample.change(edit), approved_by=("mallory",))
    assert found.state.found.manifest_error is None and found.config.manifest.max_freeze_days == 28
    assert [w.code.value for w in found.state.warnings] == ["APPROVAL_IGNORED"]
    findings = authorship_findings(found.changes)
    assert [f.code.value for f in findings] == ["TRUST_ROOT_CHANGED"]
    assert findings[0].detail.startswith("tests/trust_manifest.yaml changed")
