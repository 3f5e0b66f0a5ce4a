"""Which units this process runs: all of them (a plain `check`), one machine's
share (`check --shard I/N`), or none, reading every result back from the
machines' bundles (`combine`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from andgate.records import DiscriminationFacts, ReplayFacts
from andgate.run import RunResult
from andgate.units import Split, Unit, assign


@dataclass(frozen=True)
class Recorded:
    """What the N bundles recorded, by unit name."""

    runs: Mapping[str, RunResult] = field(default_factory=dict)
    replays: Mapping[str, ReplayFacts] = field(default_factory=dict)
    files: Mapping[str, bytes] = field(default_factory=dict)  # logs and JUnit files
    discrimination: tuple[DiscriminationFacts, ...] = ()
    gate_errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Work:
    units: tuple[Unit, ...] = ()
    split: Split | None = None
    recorded: Recorded | None = None
    owner: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(
        cls, units: Sequence[Unit], split: Split | None, recorded: Recorded | None = None
    ) -> Work:
        owner = assign(units, split.count) if split is not None else {}
        return cls(tuple(units), split, recorded, owner)

    def mine(self, unit: str) -> bool:
        """Run it here; combining, read it back (a unit no bundle holds is absent,
        which only happens beside a shard's recorded GATE_ERROR)."""
        if self.recorded is not None:
            return unit in self.recorded.runs or unit in self.recorded.replays
        if self.split is None:
            return True
        return self.owner.get(unit) == self.split.index

    def units_of(self, kind: str) -> list[Unit]:
        return [u for u in self.units if u.name.partition("/")[0] == kind]

    def single(self, kind: str) -> bool:
        return len(self.units_of(kind)) <= 1

    def mine_names(self) -> list[str]:
        return [u.name for u in self.units if self.mine(u.name)]
