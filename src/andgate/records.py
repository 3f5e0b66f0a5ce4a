"""Typed records: what the gate's phases find out, and what the verdict reads.

A leaf module: it imports nothing of andgate (the import-graph test checks),
so the pure verdict, the process runner, the plugin and the reporters all speak
the same types without pulling each other in. PYTEST_DONT_REWRITE: the plugin
imports it into the user's pytest process, so it uses only the standard library.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class TrustClass(enum.StrEnum):
    ORACLE = "oracle"
    PROPERTY = "property"
    FROZEN_FLAKE = "frozen_flake"
    UNTRUSTED = "untrusted"


# How pytest-xdist's controller begins the collection error it reports when its
# workers collected different items (`xdist.dsession.report_collection_diff`): a
# suite whose parameters differ by worker or by the second (`datetime.now()` in an
# id). The plugin keeps this line; `run.run_pytest` then runs the class again
# without distribution, as it would run without `-n`.
XDIST_COLLECTIONS_DIFFER = "Different tests were collected between "


class Role(enum.StrEnum):
    """What one pytest process is for: run a trust class, or only collect."""

    ORACLE = "oracle"
    PROPERTY = "property"
    UNTRUSTED = "untrusted"
    FROZEN_FLAKE = "frozen_flake"
    COLLECT = "collect"


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    MISSING = "missing"
    # Failed at least one attempt, then passed when pytest-rerunfailures retried it.
    RERUN_PASSED = "passed only on rerun"


def item_outcome(phases: Mapping[str, Any] | None) -> Outcome:
    """One outcome from the setup/call/teardown reports of an item.

    Anything incomplete is MISSING: a test absent from a result file is never a pass.
    """
    if not phases:
        return Outcome.MISSING
    setup, call, teardown = phases.get("setup"), phases.get("call"), phases.get("teardown")
    xfail = bool(phases.get("wasxfail"))
    if setup == "failed":
        return Outcome.ERROR
    if setup == "skipped":
        return Outcome.XFAILED if xfail else Outcome.SKIPPED
    if call == "failed":
        return Outcome.FAILED
    if call == "skipped":
        return Outcome.XFAILED if xfail else Outcome.SKIPPED
    if teardown == "failed":
        return Outcome.ERROR
    if call == "passed" and teardown == "passed":
        if phases.get("reruns"):
            return Outcome.RERUN_PASSED
        return Outcome.XPASSED if xfail else Outcome.PASSED
    return Outcome.MISSING


@dataclass(frozen=True, slots=True)
class ItemFacts:
    """What pytest collection tells us about one item (slotted: a check holds
    several per collected item)."""

    nodeid: str
    path: str
    name: str
    markers: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid,
            "path": self.path,
            "name": self.name,
            "markers": sorted(self.markers),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemFacts:
        return cls(data["nodeid"], data["path"], data["name"], frozenset(data["markers"]))


@dataclass(frozen=True, slots=True)
class InventoryRecord:
    """One line of the trust inventory (`trust_inventory.json`): an item, its class,
    why, and its outcome (None: it did not run in its class's process)."""

    facts: ItemFacts
    cls: str
    why: str
    outcome: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "nodeid": self.facts.nodeid,
            "file": self.facts.path,
            "class": self.cls,
            "why": self.why,
            "outcome": self.outcome,
        }


class Reason(enum.StrEnum):
    MANIFEST_INVALID = "MANIFEST_INVALID"
    NO_ORACLE = "NO_ORACLE"
    ORACLE_FAILED = "ORACLE_FAILED"
    ORACLE_NEUTRALIZED = "ORACLE_NEUTRALIZED"
    NO_KNOWN_BAD = "NO_KNOWN_BAD"
    KNOWN_BAD_STALE = "KNOWN_BAD_STALE"
    PROPERTY_FAILED = "PROPERTY_FAILED"
    NO_PROPERTY = "NO_PROPERTY"
    NO_SEEDS = "NO_SEEDS"
    FREEZE_EXPIRED = "FREEZE_EXPIRED"
    FREEZE_INVALID = "FREEZE_INVALID"
    UNTRUSTED_FAILED = "UNTRUSTED_FAILED"
    ORACLE_AUTHORSHIP = "ORACLE_AUTHORSHIP"
    TRUST_ROOT_CHANGED = "TRUST_ROOT_CHANGED"
    LOCK_MISMATCH = "LOCK_MISMATCH"
    COLLECTION_ERROR = "COLLECTION_ERROR"
    GATE_ERROR = "GATE_ERROR"
    PRODUCTION_SUSPICIOUS = "PRODUCTION_SUSPICIOUS"
    # a failing oracle item the change disputes in `disputes_file`
    ORACLE_DISPUTED = "ORACLE_DISPUTED"
    # an oracle file base cannot collect whose items are parametrised over production
    # values: head would decide the oracle set (else the warning of the same name)
    ORACLE_UNPINNED = "ORACLE_UNPINNED"
    # with require_discriminating_tests: true (else the warning of the same name)
    AGENT_TESTS_DISCRIMINATE_NOTHING = "AGENT_TESTS_DISCRIMINATE_NOTHING"
    # with block_weakened_oracles: true and no approval of head itself (else the warning)
    ORACLE_WEAKENED = "ORACLE_WEAKENED"


class Warning_(enum.StrEnum):
    FREEZE_INEFFECTIVE = "FREEZE_INEFFECTIVE"
    ORACLE_SKIPPED = "ORACLE_SKIPPED"
    ORACLE_LITERAL = "ORACLE_LITERAL"
    ORACLE_FROM_PRODUCTION = "ORACLE_FROM_PRODUCTION"
    AGENT_TESTS_DISCRIMINATE_NOTHING = "AGENT_TESTS_DISCRIMINATE_NOTHING"
    ORACLE_CHANGED = "ORACLE_CHANGED"
    UNTRUSTED_FAILED = "UNTRUSTED_FAILED"
    UNCOMMITTED_CHANGES = "UNCOMMITTED_CHANGES"
    APPROVAL_IGNORED = "APPROVAL_IGNORED"
    ADOPTING = "ADOPTING"
    GENERATED_FILES = "GENERATED_FILES"
    ORACLE_UNPINNED = "ORACLE_UNPINNED"
    DISPUTE_MOOT = "DISPUTE_MOOT"
    RUNNER_FILE_RESTORED = "RUNNER_FILE_RESTORED"
    ORACLE_WEAKENED = "ORACLE_WEAKENED"


class Bit(enum.StrEnum):
    AUTHORSHIP = "authorship_ok"
    LOCKS = "locks_ok"
    ORACLE = "oracle_ok"
    KNOWN_BAD = "known_bad_ok"
    PROPERTY = "property_ok"
    FREEZE = "freeze_ok"
    UNTRUSTED = "untrusted_ok"


class Decision(enum.StrEnum):
    ALLOW = "allow"
    BLOCK = "block"


@dataclass(frozen=True)
class Finding:
    code: Reason | Warning_
    detail: str
    bit: Bit | None = None

    def to_json(self) -> dict[str, str]:
        return {"code": self.code.value, "detail": self.detail}


# -- recorded facts -------------------------------------------------------------------


@dataclass(frozen=True)
class ChangeFacts:
    """Files changed base..head, sorted by what they are."""

    oracle_paths: tuple[str, ...] = ()
    trust_root_paths: tuple[str, ...] = ()
    # (path, why) for trust-root pytest config files: what pytest would read differently
    trust_root_why: tuple[tuple[str, str], ...] = ()
    production_paths: tuple[str, ...] = ()
    test_paths: tuple[str, ...] = ()
    approved_by: tuple[str, ...] = ()
    # every approval is an owner's review of an earlier commit whose protected bytes
    # equal head's: it lifts ORACLE_AUTHORSHIP and TRUST_ROOT_CHANGED, nothing else
    earlier_commit_only: bool = False
    require_human_owner: bool = True
    # the production-diff scan: constructs that game tests (file:line: construct), and
    # literals from an oracle's expectations hard-coded into production code
    suspicious: tuple[str, ...] = ()
    oracle_literals: tuple[str, ...] = ()
    # The change adopts andgate (no configuration on base or its target branch): its
    # trust-root files are its own to add, its production files may not change.
    adopting: bool = False
    # Test files the change adds under an oracle glob, unapproved: the change's own
    # tests (untrusted) now, oracle files once merged or approved.
    added_under_oracle_globs: tuple[str, ...] = ()

    @property
    def approved(self) -> bool:
        return bool(self.approved_by)

    @property
    def head_approved(self) -> bool:
        """An approval of head itself (what PRODUCTION_SUSPICIOUS needs)."""
        return self.approved and not self.earlier_commit_only

    @property
    def case(self) -> str:
        touched = bool(self.oracle_paths or self.trust_root_paths)
        if touched and self.production_paths:
            return "mixed change: production code and trust-root files together"
        if touched:
            return "trust-root-only change"
        return "no trust-root file changed"


@dataclass(frozen=True)
class LockFacts:
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ItemResult:
    nodeid: str
    outcome: Outcome
    message: str = ""


@dataclass(frozen=True)
class ClassFacts:
    """One class process: every item it had to report, and what it reported."""

    results: tuple[ItemResult, ...] = ()
    collection_errors: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Unpinned:
    """An oracle file (or the folder or session holding it) that base's collection
    could not collect: it pins nothing."""

    where: str  # the node id base reported the error for: a file, a folder, "" (session)
    error: str  # base's error, one line
    # Its items are parametrised over production values (ORACLE_FROM_PRODUCTION) and no
    # owner approved: head would decide the oracle set.
    from_production: bool = False


@dataclass(frozen=True)
class OracleFacts(ClassFacts):
    pinned_missing: tuple[str, ...] = ()
    # skips that hold on base too: a platform skip by mark, or an imperative or
    # unittest skip with the same reason when the item runs again on base
    not_applicable: tuple[str, ...] = ()
    unpinned: tuple[Unpinned, ...] = ()


@dataclass(frozen=True)
class PropertyFacts(ClassFacts):
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    seeds: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    required: bool = True
    empty_because: str = ""  # e.g. the invariants file is missing


class ReplayStatus(enum.StrEnum):
    """What one known-bad replay proved."""

    BITES = "bites"  # an oracle item failed: the oracles still catch this bug
    STALE = "stale"  # the fixture no longer applies to head
    GREEN = "green"  # every oracle item passed: the oracles no longer bite
    ERROR = "error"  # the replay could not run


@dataclass(frozen=True)
class ReplayFacts:
    name: str
    applied: bool
    failed: tuple[str, ...] = ()
    problem: str = ""
    error: str | None = None
    seconds: float = 0.0
    timed_out: tuple[str, ...] = ()  # of `failed`, those that ran past their limit
    # what its runs loaded that is not the test side they were given: it proves nothing
    tampered: tuple[str, ...] = ()
    # Oracle items not run: they timed out on head without the fixture, so they prove
    # nothing here (`check.oracle.replay._Replay.run`).
    hung_on_head: tuple[str, ...] = ()
    waited: float = 0.0  # seconds spent on items that ran past their limit

    @property
    def status(self) -> ReplayStatus:
        """The one place that says whether a fixture bit."""
        if self.error:
            return ReplayStatus.ERROR
        if not self.applied:
            return ReplayStatus.STALE
        return ReplayStatus.BITES if self.failed else ReplayStatus.GREEN


@dataclass(frozen=True)
class StepTime:
    """Where a check's wall time went: one step of the gate, one pytest process, or
    the worktrees' preparation, from the check's start (`check.timings`)."""

    name: str
    # "step" (the gate's own), "phase" (a test phase: its processes and worktrees),
    # "pytest" (one process), "worktrees"
    kind: str
    started: float  # seconds after the check started
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "started_s": round(self.started, 3),
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class Tampering:
    """A trusted run (oracle, property, known-bad replay, a run of base) that loaded
    test-side code other than the tree it checked out (contract section 4, step 4):
    PRODUCTION_SUSPICIOUS, and its results do not count, whoever approved: no review
    of the production code makes it base's tests that ran."""

    detail: str  # the file, the module the run loaded from it, and why
    run: str  # which run: "oracle", "known-bad kb_x", "base oracle", ...
    bit: Bit  # the class whose results it was to give


@dataclass(frozen=True)
class KnownBadFacts:
    replays: tuple[ReplayFacts, ...] = ()
    required: bool = True


@dataclass(frozen=True)
class DiscriminationFacts:
    """The untrusted items a change adds or edits, each with the broken versions of
    head (known-bad fixtures, mutants of the lines it touched) it failed against."""

    items: tuple[tuple[str, tuple[str, ...]], ...] = ()
    against: tuple[str, ...] = ()  # the broken versions that ran
    required: bool = False  # require_discriminating_tests: nothing discriminated blocks
    incomplete: bool = False  # the time budget ran out before every broken version ran
    skipped: tuple[str, ...] = ()  # broken versions not tried, or ended, when it ran out
    budget: float | None = None  # the budget's seconds (from the end of the classes)

    @property
    def blind(self) -> tuple[str, ...]:
        return tuple(nodeid for nodeid, killed_by in self.items if not killed_by)


@dataclass(frozen=True)
class HiddenFailure:
    """A base oracle item that fails on head's production code while head's edited
    oracle does not show it: the edit hides the failure."""

    nodeid: str  # base's item
    failure: str  # how it failed there: outcome and the message's last line
    on_head: str  # what head has in its place: "passes", or "deleted" (no such item)


@dataclass(frozen=True)
class WeakenedMutant:
    """A mutant of head's production code that base's oracle kills and head's lets
    pass: something the edit stops checking."""

    path: str
    line: int
    function: str
    mutation: str  # the changed line, before and after: "`a < b` -> `a <= b`"
    caught_by: tuple[str, ...]  # base's oracle items that failed under it


@dataclass(frozen=True)
class EvidenceFacts:
    """What an edit of oracle items gives up (contract section 6, "Approval evidence"):
    the failures it hides on head's code and the mutants it lets through, with what
    was tried. Present only when the change edits or deletes oracle items."""

    edited: tuple[str, ...] = ()  # base's oracle items the change edits or deletes
    files: tuple[str, ...] = ()  # base's oracle files they are in
    not_measured: str = ""  # why nothing was measured (--no-evidence, a shard), or ""
    error: str = ""  # what went wrong while measuring: stated, never a GATE_ERROR
    hidden: tuple[HiddenFailure, ...] = ()
    hidden_known: bool = True  # False: a side's run without mutants did not end
    weakened: tuple[WeakenedMutant, ...] = ()
    functions: tuple[str, ...] = ()  # the production functions mutated, `path::name`
    mutants: int = 0  # mutants made
    tried: int = 0  # mutants decided (base's oracle let them pass, or both sides ran)
    budget: float = 0.0  # seconds
    seconds: float = 0.0  # what its runs took beyond the check's own (wall time)
    out_of_budget: bool = False  # the budget ran out before every mutant was decided
    block: bool = False  # block_weakened_oracles

    @property
    def left(self) -> int:
        """Mutants not decided: the budget ran out, or a run failed."""
        return max(0, self.mutants - self.tried)

    @property
    def measured(self) -> bool:
        return not self.not_measured

    @property
    def complete(self) -> bool:
        """Every mutant decided and nothing went wrong: "none found" means none."""
        return self.measured and not self.error and self.hidden_known and self.left == 0

    @property
    def found(self) -> bool:
        return bool(self.hidden or self.weakened)


@dataclass(frozen=True)
class FreezeFacts:
    expired: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    ineffective: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dispute:
    """One entry of the change's disputes file: an oracle item it says contradicts the
    specification. `oracle_at_base`: the node id equals exactly one oracle item base
    collected (None: base's oracle collection did not complete, so it is not judged)."""

    nodeid: str
    reason: str
    oracle_at_base: bool | None = None
    hint: str = ""  # why a node id is no oracle item (it names a file, a class, ...)


@dataclass(frozen=True)
class DisputeFacts:
    """The disputes file read from head. A dispute can only block: `problem` (the file
    is malformed) is a block, and no entry ever lifts a reason."""

    path: str = ""
    disputes: tuple[Dispute, ...] = ()
    problem: str | None = None


class DisputeStatus(enum.StrEnum):
    DISPUTED = "disputed"  # the oracle item did not pass: ORACLE_DISPUTED
    PASSES = "moot: the oracle item passes"
    NOT_ORACLE = "moot: not an oracle item collected at base"
    NOT_RUN = "moot: the oracle item did not run on head"
    NOT_JUDGED = "not judged: the oracle phase did not complete"


@dataclass(frozen=True)
class DisputeOutcome:
    """What the verdict made of one dispute (verdict.json `disputes`)."""

    nodeid: str
    reason: str
    status: DisputeStatus
    failure: str = ""  # how the oracle item failed, when it did

    def to_json(self) -> dict[str, str]:
        return {
            "nodeid": self.nodeid,
            "reason": self.reason,
            "status": self.status.value,
            "failure": self.failure,
        }


@dataclass(frozen=True)
class Facts:
    """Everything the verdict depends on. None: that phase was never recorded."""

    manifest_error: str | None = None
    gate_errors: tuple[str, ...] = ()
    changes: ChangeFacts | None = None
    lock: LockFacts | None = None
    oracle: OracleFacts | None = None
    known_bad: KnownBadFacts | None = None
    property: PropertyFacts | None = None
    freezes: FreezeFacts | None = None
    untrusted: ClassFacts | None = None
    discrimination: DiscriminationFacts | None = None
    evidence: EvidenceFacts | None = None  # None: the change edits no oracle item
    disputes: DisputeFacts | None = None  # None: no disputes file was read
    tampered: tuple[Tampering, ...] = ()  # trusted runs that did not run the test side given
    fail_closed_untrusted: bool = True
    warnings: tuple[Finding, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)


# -- the production scan's findings ------------------------------------------------


class Construct(enum.StrEnum):
    """What a finding is; the values are the names `production_scan.allow` takes."""

    HARNESS_REFERENCE = "harness_reference"
    HARNESS_ENV = "harness_env"
    STACK_INSPECTION = "stack_inspection"
    CONSTANT_COMPARISON = "constant_comparison"
    EXIT_AT_IMPORT = "exit_at_import"
    SHADOWING_MODULE = "shadowing_module"
    IMPLICIT_IMPORT = "implicit_import"
    BINARY_FILE = "binary_file"
    # Production-side evasions: what Python runs differs from what the scan read.
    SOURCE_ENCODING = "source_encoding"
    SYMLINK = "symlink"
    PYTEST_PLUGIN = "pytest_plugin"
    ENVIRONMENT_WRITE = "environment_write"
    SYSTEM_FILE_WRITE = "system_file_write"
    GITATTRIBUTES = "gitattributes"
    ORACLE_LITERAL = "oracle_literal"
    HARD_CODED_ANSWER = "hard_coded_answer"
    IMPORT_MACHINERY = "import_machinery"
    TEST_SIDE_WRITE = "test_side_write"
    TEST_RUN_PROBE = "test_run_probe"

    @property
    def label(self) -> str:
        return LABELS[self]


LABELS = {
    Construct.HARNESS_REFERENCE: "test-harness reference",
    Construct.HARNESS_ENV: "test-harness environment check",
    Construct.STACK_INSPECTION: "stack inspection",
    Construct.CONSTANT_COMPARISON: "comparison returning a constant",
    Construct.EXIT_AT_IMPORT: "process exit at import",
    Construct.SHADOWING_MODULE: "module shadowing",
    Construct.IMPLICIT_IMPORT: "file Python or pytest imports implicitly",
    Construct.BINARY_FILE: "binary file",
    Construct.SOURCE_ENCODING: "source-encoding declaration other than UTF-8",
    Construct.SYMLINK: "symlink",
    Construct.PYTEST_PLUGIN: "pytest hook or plugin registration",
    Construct.ENVIRONMENT_WRITE: "write to the process environment",
    Construct.SYSTEM_FILE_WRITE: "write to a system file",
    Construct.GITATTRIBUTES: ".gitattributes change",
    Construct.ORACLE_LITERAL: "literal from an oracle's expectations",
    Construct.HARD_CODED_ANSWER: "hard-coded answer to an oracle",
    Construct.IMPORT_MACHINERY: "change to what an import loads",
    Construct.TEST_SIDE_WRITE: "write to the test side or to bytecode caches",
    Construct.TEST_RUN_PROBE: "branch on state that differs under a test run",
}
