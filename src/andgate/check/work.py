"""Which units this process runs: all of them (a plain `check`), one machine's
share (`check --shard I/N`), or none, reading every result back from the
machines' bundles (`combine`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from andgate.check.bundle import Combined, Recorded
from andgate.check.plan.trees import Plan
from andgate.check.units import Split, Unit, assign, plan_digest, work_units
from andgate.errors import BundleError
from andgate.trust.config import BaseConfig


@dataclass(frozen=True)
class Work:
    units: tuple[Unit, ...] = ()
    split: Split | None = None
    recorded: Recorded | None = None
    owner: Mapping[str, int] = field(default_factory=dict)
    digest: str = ""  # plan_digest: what every shard of one check must agree on

    @classmethod
    def of(
        cls,
        units: Sequence[Unit],
        split: Split | None,
        recorded: Recorded | None = None,
        digest: str = "",
    ) -> Work:
        owner = assign(units, split.count) if split is not None else {}
        return cls(tuple(units), split, recorded, owner, digest)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(u.name for u in self.units)

    def mine(self, unit: str) -> bool:
        """Run it here; combining, read it back (a unit no bundle holds is absent,
        which only happens beside a shard's recorded GATE_ERROR)."""
        if self.recorded is not None:
            return unit in self.recorded.runs or unit in self.recorded.replays
        if self.split is None:
            return True
        return self.owner.get(unit) == self.split.index

    def units_of(self, kind: str) -> list[Unit]:
        return [u for u in self.units if u.kind == kind]

    def single(self, kind: str) -> bool:
        return len(self.units_of(kind)) <= 1

    def mine_names(self) -> list[str]:
        return [u.name for u in self.units if self.mine(u.name)]


def plan_work(
    plan: Plan, config: BaseConfig, split: Split | None, combine: Combined | None
) -> Work:
    """The check's units, and which of them run here. Combining, the bundles must
    be of this very plan: their plan digest and unit list are this one's."""
    replays = config.manifest.oracle_must_fail_known_bad and bool(plan.trusted_oracle_files)
    count = split.count if split is not None else 1
    units = work_units(plan, replays=len(config.known_bad) if replays else 0, count=count)
    recorded = combine.recorded if combine is not None else None
    work = Work.of(units, split, recorded, plan_digest(plan, units))
    bundled = (combine.key.plan_digest, combine.key.units) if combine is not None else None
    if bundled is not None and bundled != (work.digest, work.names):
        raise BundleError(
            "the bundles were made for another plan of this check (their units differ from "
            "the ones this base, head and manifest give); re-run the shards with this andgate"
        )
    return work
