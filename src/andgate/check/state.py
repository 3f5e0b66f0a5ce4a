"""What one `check` has found so far: typed fields, filled phase by phase.

Every field the verdict reads is a typed record from `records.py`; a phase
that never ran (a crash, a timeout, bad input) leaves its field None, and the
verdict then leaves its bit false. `facts()` is the one place the orchestrator's
state becomes the verdict's input.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from andgate.check.inventory.items import counts
from andgate.process.requests import RunEnvironment
from andgate.process.results import RunResult
from andgate.process.timings import Timings
from andgate.records import (
    Bit,
    Facts,
    Finding,
    InventoryRecord,
    ReplayFacts,
    Role,
    Tampering,
)
from andgate.report.context import ReportContext
from andgate.report.junit import Attempt, annotate
from andgate.trust.freeze import Freeze
from andgate.trust.github import Approval, IgnoredReview
from andgate.verdict import Verdict


class RunName(enum.StrEnum):
    """The pytest runs of a check whose results outlive their phase."""

    ORACLE = "oracle"
    BASE_ORACLE = "base_oracle"
    BASE_SKIPS = "base_skips"  # the oracle items skipped by code on head, run on base
    PROPERTY = "property"
    UNTRUSTED = "untrusted"
    FLAKE = "flake"


@dataclass(frozen=True)
class RunKey:
    """Which run a result is: a class's (`kind`), one of its units' when the class is
    split over machines (`unit`), or one process of either (`process`). Its text
    (`oracle`, `oracle@2`, `oracle.1`) names the run's files; it is never read back."""

    kind: RunName
    unit: int | None = None  # the unit's index, when the class has more than one
    process: int | None = None  # the process's index, when the unit is split over --jobs

    def __str__(self) -> str:
        unit = "" if self.unit is None else f"@{self.unit}"
        process = "" if self.process is None else f".{self.process}"
        return f"{self.kind}{unit}{process}"

    def whole(self) -> RunKey:
        """The class's or unit's run that this process is a part of (itself if none)."""
        return replace(self, process=None)


@dataclass(frozen=True)
class PhaseRuns:
    """What one test phase ran, as it hands it back to the pipeline: each run's
    result by key, and which run holds each of its units' results (what a shard's
    bundle records). Read-only: a later phase gets it from the pipeline, never
    from a phase that still runs."""

    runs: Mapping[RunKey, RunResult] = field(default_factory=lambda: MappingProxyType({}))
    units: Mapping[str, RunKey] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(cls, runs: Mapping[RunKey, RunResult], units: Mapping[str, RunKey]) -> PhaseRuns:
        return cls(MappingProxyType(dict(runs)), MappingProxyType(dict(units)))

    def get(self, kind: RunName) -> RunResult | None:
        """The class's run (its units and processes folded into it), if it ran."""
        return self.runs.get(RunKey(kind))


# How a run of `RunName` is named where its results are voided.
RUN_TITLES: dict[str, str] = {
    RunName.ORACLE: "oracle",
    RunName.BASE_ORACLE: "base oracle collection",
    RunName.BASE_SKIPS: "oracle skips on base",
    RunName.PROPERTY: "property",
}


@dataclass
class Captured:
    """Logs and JUnit files copied out of scratch at the end of each phase, before
    code of a later, less trusted phase could rewrite them. Each file is looked at
    once: one skipped as broken (or absent) is never read again."""

    files: dict[str, bytes] = field(default_factory=dict)
    looked_at: set[str] = field(default_factory=set)
    runs: dict[str, RunKey] = field(default_factory=dict)  # file -> the run it is of

    def collect(self, runs: Mapping[RunKey, RunResult]) -> None:
        for name, result in runs.items():
            for kind, path in (("log", result.log), ("junit", result.junit)):
                key = f"{name}.{kind}"
                if key in self.looked_at or path is None:
                    continue
                self.looked_at.add(key)
                self.runs[key] = name
                data = path.read_bytes() if path.exists() else None
                if data is None or (kind == "junit" and not _complete_junit(data)):
                    # pytest died while writing it (its junitxml cannot write a
                    # non-UTF-8 file name): an empty report beats a broken one.
                    continue
                self.files[key] = data

    def put(self, run: RunKey, kind: str, data: bytes) -> None:
        """A file made of other runs' files (their JUnit files, merged)."""
        key = f"{run}.{kind}"
        self.files[key] = data
        self.runs[key] = run

    def of_runs(self, runs: Collection[RunKey]) -> dict[str, bytes]:
        """The files of `runs` and of their processes."""
        return {
            key: data
            for key, data in self.files.items()
            if (run := self.runs.get(key)) is not None and run.whole() in runs
        }


def _complete_junit(data: bytes) -> bool:
    return data.rstrip().endswith(b"</testsuites>")


@dataclass
class CheckState:
    """Facts and run results gathered so far; whatever is missing stays None."""

    # What the verdict reads, as the phases return it: the pipeline records each with
    # `dataclasses.replace`, which checks the names. `facts()` adds only
    # what accumulates along the way: gate errors, warnings, the inventory's counts.
    found: Facts = field(default_factory=Facts)
    dispute_sources: dict[str, Any] = field(default_factory=dict)  # disputes.SourceAtBase
    # oracle files parametrised over production values (the production scan's
    # ORACLE_FROM_PRODUCTION): one that base cannot collect leaves head to decide
    oracle_from_production: frozenset[str] = frozenset()
    warnings: list[Finding] = field(default_factory=list)
    gate_errors: list[str] = field(default_factory=list)
    base: str | None = None
    head: str | None = None
    repo: Path | None = None
    manifest_digest: str | None = None  # these three are what shards must agree on
    plan_digest: str | None = None
    unit_names: tuple[str, ...] | None = None
    runs: dict[RunKey, RunResult] = field(default_factory=dict)
    units_ran: dict[str, RunKey] = field(default_factory=dict)  # unit -> its run
    replays: list[ReplayFacts] = field(default_factory=list)
    inventory: list[InventoryRecord] = field(default_factory=list)
    property_seed: int | None = None
    approvals: tuple[Approval, ...] = ()
    # owners' reviews of earlier commits whose protected files changed since
    ignored_reviews: tuple[IgnoredReview, ...] = ()
    patches: dict[str, str] = field(default_factory=dict)  # known-bad fixtures, for report.html
    live_freezes: tuple[Freeze, ...] = ()
    environment: RunEnvironment = field(default_factory=RunEnvironment)
    captured: Captured = field(default_factory=Captured)
    traceback: str | None = None
    # (path, sha256) of the checkout's generated files carried into the worktrees
    generated: tuple[tuple[str, str], ...] = ()
    adopting: bool = False  # neither base nor the target branch had a manifest
    # The commit whose known-bad fixtures replayed, when not base (an owner approved head)
    known_bad_from: str | None = None
    # Where the check's wall time goes (`check --profile`, timings.json); the pool's
    # leases record into it too.
    timings: Timings = field(default_factory=Timings)

    def facts(self) -> Facts:
        return replace(
            self.found,
            gate_errors=tuple(self.gate_errors),
            warnings=tuple(self.warnings),
            counts=counts(self.inventory),
        )

    def report_context(self, verdict: Verdict, today: dt.date) -> ReportContext:
        """What the reporters read: the verdict and the evidence behind it."""
        return ReportContext(
            verdict=verdict,
            base=self.base,
            head=self.head,
            today=today,
            inventory=self.inventory,
            replays=self.replays,
            property=self.found.property,
            property_seed=self.property_seed,
            changes=self.found.changes,
            files=self.captured.files,
            traceback=self.traceback,
            approvals=self.approvals,
            ignored_reviews=self.ignored_reviews,
            patches=self.patches,
            freezes=self.live_freezes,
            discrimination=self.found.discrimination,
            evidence=self.found.evidence,
            dispute_sources=self.dispute_sources,
            disputes_file=self.found.disputes.path if self.found.disputes else "",
            generated=self.generated,
            known_bad_from=self.known_bad_from,
            timings=self.timings.records(),
        )

    def tampering(self) -> tuple[Tampering, ...]:
        """What the trusted runs so far loaded that is not the test side they were
        given (`process.integrity.judge`), each file once, with the class it voids."""
        found: dict[str, Tampering] = {}
        for key, result in self.runs.items():
            bit = Bit.PROPERTY if key.kind == RunName.PROPERTY else Bit.ORACLE
            title = RUN_TITLES.get(key.kind, str(key.kind))
            for detail in result.tampered:
                found.setdefault(detail, Tampering(detail, title, bit))
        for replay in self.replays:
            title = f"known-bad {replay.name}"
            for detail in replay.tampered:
                found.setdefault(detail, Tampering(detail, title, Bit.KNOWN_BAD))
        return tuple(found.values())

    def record(self, phase: PhaseRuns) -> None:
        """A phase's runs, as it returned them: what tampering, the JUnit files, the
        inventory and a shard's bundle read."""
        self.runs.update(phase.runs)
        self.units_ran.update(phase.units)

    def capture(self) -> None:
        self.captured.collect(self.runs)

    def annotate_junit(self) -> None:
        """Every rerun attempt into the JUnit files (`<flakyFailure>`, `<rerunFailure>`),
        and the frozen flakes marked as such."""
        for name in (RunName.ORACLE, RunName.PROPERTY, RunName.UNTRUSTED, RunName.FLAKE):
            key, run = f"{name}.junit", self.runs.get(RunKey(name))
            document = self.captured.files.get(key)
            if document is None or run is None:
                continue
            attempts = {
                nodeid: [Attempt(str(w), str(m)) for w, m in entry.get("attempts", ())]
                for nodeid, entry in run.reports.items()
                if entry.get("attempts")
            }
            frozen = {i.facts.nodeid for i in run.selected(Role.FROZEN_FLAKE)}
            self.captured.files[key] = annotate(document, attempts, frozen)
