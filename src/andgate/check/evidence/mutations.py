"""The evidence's mutants: what each side found of one, the order they run in, each
item's time limit under one, and when head's side need not run. Pure: testable
without git or pytest."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from andgate.check.cache import KillerCache
from andgate.check.discrimination.mutate import Mutant
from andgate.check.evidence.edited import EditedFile
from andgate.check.evidence.targets import one_line
from andgate.process.limits import LATER_FACTOR
from andgate.process.results import RunResult
from andgate.records import WeakenedMutant

# The least time limit of an item under a mutant (`mutant_limit`).
MUTANT_ITEM_FLOOR = 2.0


@dataclass
class Mutation:
    """A mutant and what each side's oracle made of it so far."""

    index: int
    mutant: Mutant
    base_killers: tuple[str, ...] | None = None  # None: base's side did not run
    head_caught: bool | None = None  # None: head's side did not run

    @property
    def decided(self) -> bool:
        return self.base_killers == () or (bool(self.base_killers) and self.head_caught is not None)

    @property
    def weakened(self) -> bool:
        """Base's oracle kills it and head's lets it pass: evidence."""
        return bool(self.base_killers) and self.head_caught is False

    def as_weakened(self) -> WeakenedMutant:
        mutant = self.mutant
        return WeakenedMutant(
            mutant.path, mutant.line, mutant.function, one_line(mutant), self.base_killers or ()
        )


def mutant_limit(check_limit: float | None, slowest: float) -> float:
    """An item's time limit under a mutant: LATER_FACTOR times the slowest item of the
    files without it, at least MUTANT_ITEM_FLOOR, at most the check's limit. Far below
    a check's own floor, and a timeout is not confirmed by a run alone: a mutant that
    loops forever is common, and would cost its limit on each side. An honest item that
    a loaded machine slows past ten times its own time (and the floor) is a wrong kill
    at worst, and head's side runs under the same limit."""
    limit = max(MUTANT_ITEM_FLOOR, LATER_FACTOR * slowest)
    return limit if check_limit is None else min(check_limit, limit)


def slowest(runs: Iterable[RunResult], files: Collection[str] | None) -> float:
    """The longest any item of `files` (None: all) took in these runs, timeouts aside."""
    return max(
        (
            float(entry.get("seconds") or 0.0)
            for run in runs
            for nodeid, entry in run.reports.items()
            if entry.get("timeout") is None and (files is None or nodeid.split("::", 1)[0] in files)
        ),
        default=0.0,
    )


def caught_by_unedited(killers: Iterable[str], edited: Sequence[EditedFile]) -> bool:
    """Whether one of base's killers is an item the change did not edit, in a file whose
    other code it did not change either: head has the same test, which catches the
    mutant there too, so head's side need not run."""
    by_path = {e.path: e for e in edited}
    for killer in killers:
        path, sep, _ = killer.partition("::")
        holder = by_path.get(path)
        if sep and holder is not None and holder.functions is not None and not holder.holds(killer):
            return True
    return False


def remembered_first(
    mutants: Sequence[Mutant], cache: KillerCache, base_digest: str, head_digest: str
) -> list[Mutant]:
    """The mutants in their order, those that were evidence last time first (base's
    side remembers a killer, head's none) and those head's oracle killed last; the
    cache only orders (a poisoned entry costs time, never a finding)."""

    def remembered(mutant: Mutant) -> int:
        base = cache.get(mutant.patch, base_digest)
        head = cache.get(mutant.patch, head_digest)
        return 0 if base and not head else 2 if head else 1

    return sorted(mutants, key=remembered)  # stable: the round-robin order within each
