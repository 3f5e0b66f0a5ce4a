"""What one `check` (or one shard of it, or `combine`) is asked to do."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from andgate.check.bundle import Combined
from andgate.check.cache import default_cache_dir
from andgate.check.units import Split
from andgate.process.requests import DEFAULT_ITEM_TIMEOUT, DEFAULT_TIMEOUT
from andgate.report.progress import Progress
from andgate.trust.manifest import DEFAULT_MANIFEST

# Seconds the approval evidence may add to a check (`check.evidence.phase`): a minute
# buys a few dozen mutants of a small suite, each run on both sides.
DEFAULT_EVIDENCE_BUDGET = 60.0


@dataclass(frozen=True)
class CheckOptions:
    repo: Path = Path(".")
    base: str | None = None
    head: str = "HEAD"
    manifest: str = DEFAULT_MANIFEST
    approved_by: tuple[str, ...] = ()  # --approved-by
    approved_by_env: tuple[str, ...] = ()  # ANDGATE_APPROVED_BY
    approvals: str = "none"  # "github-reviews": owners' pull-request reviews count too
    today: dt.date = field(default_factory=dt.date.today)
    artifacts: Path | None = None
    jobs: int = os.cpu_count() or 1
    timeout: float = DEFAULT_TIMEOUT
    item_timeout: float = DEFAULT_ITEM_TIMEOUT  # each test item's limit (the CLI's floor: 30 s)
    hypothesis_seed: int | None = None
    cache_dir: Path | None = field(default_factory=default_cache_dir)
    progress: Progress | None = None  # status lines on stderr (the CLI's, unless --quiet)
    discrimination: bool = True  # do the tests the change adds fail against broken code?
    # Seconds the report may run on after the classes; None: a quarter of their time, from
    # 5 s to 60 s (`check.discrimination.phase.default_budget`).
    discrimination_budget: float | None = None
    evidence: bool = True  # what an edit of oracle items gives up (ORACLE_WEAKENED)
    # Seconds its runs may add to the check (None: DEFAULT_EVIDENCE_BUDGET).
    evidence_budget: float | None = None
    split: Split | None = None  # --shard I/N: this machine's part only (combine: N)
    combine: Combined | None = None  # `combine`: every unit's result, from the bundles
    # Told the commits as soon as they are resolved (the CLI's first line): which base,
    # and how it was picked (--base, or the merge-base with which branch and why).
    announce: Callable[[str], None] | None = None

    def bundle_options(self) -> dict[str, object]:
        """The options every shard and the combine step must share."""
        return {
            "manifest": self.manifest,
            "today": self.today.isoformat(),
            "hypothesis_seed": self.hypothesis_seed,
            "approved_by": list(self.approved_by),
            "approved_by_env": list(self.approved_by_env),
            "approvals": self.approvals,
            "discrimination": self.discrimination,
            "discrimination_budget": self.discrimination_budget,
            "evidence": self.evidence,
            "evidence_budget": self.evidence_budget,
            "item_timeout": self.item_timeout,  # an item's outcome depends on it
        }
