"""The units of work of one check, and which of N CI machines runs each.

`andgate check --shard I/N` runs the units assigned to machine I and writes
them to a bundle; `andgate combine` reads the N bundles back. The units are a
pure function of the plan (base, head, the manifest read from base), never of
the machine: every machine computes the same list and the same assignment, so
the N parts are disjoint and together complete.

A class is split by file into up to N units (`shard.shards` over the files'
sizes), each machine splitting its units again over its own `--jobs`. The
base pin, each known-bad replay and the frozen_flake class are one unit each.
The discrimination report rides with the untrusted units: it breaks the code
under the agent's tests that the same machine ran.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from andgate.check.plan.trees import Plan
from andgate.plugin.shard import STARTUP_BYTES, Shard, collect_only_weight, shards

BASE_ORACLE = "base-oracle"
FLAKE = "flake"
KNOWN_BAD = "known-bad"


@dataclass(frozen=True)
class Unit:
    kind: str  # "oracle", "base-oracle", "known-bad", "untrusted", "flake", ...
    weight: int  # bytes of test source, plus a start-up: what balances the machines
    shard: Shard | None = None  # a class's share of the files, when the class is split
    index: int | None = None  # its place among its kind's units; None: the kind's one unit

    @property
    def name(self) -> str:
        """What every machine and bundle calls it: "oracle/0", "base-oracle",
        "known-bad/2", ... (a name only: its kind and index are the fields)."""
        return self.kind if self.index is None else f"{self.kind}/{self.index}"


@dataclass(frozen=True)
class Split:
    """This machine's part: `index` of `count` (0-based inside, 1-based on the CLI)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Split:
        """`I/N` with 1 <= I <= N, as `--shard` takes it; ValueError otherwise."""
        left, sep, right = text.partition("/")
        if not sep or not left.strip().isdigit() or not right.strip().isdigit():
            raise ValueError(f"--shard {text}: expected I/N, e.g. --shard 1/3")
        index, count = int(left), int(right)
        if not 1 <= index <= count:
            raise ValueError(f"--shard {text}: I must be between 1 and N, e.g. --shard 1/{count}")
        return cls(index - 1, count)

    def __str__(self) -> str:
        return f"{self.index + 1}/{self.count}"


def class_units(kind: str, sizes: Mapping[str, int], count: int) -> list[Unit]:
    """A class's units: one per file shard over `count` machines (one: no split)."""
    parts = shards(sizes, count)
    if len(parts) == 1:
        return [Unit(kind, sum(sizes.values()) + STARTUP_BYTES, index=0)]
    return [
        Unit(
            kind,
            sum(n for p, n in sizes.items() if s.owns(p)) + STARTUP_BYTES,
            s,
            index=s.index,
        )
        for s in parts
    ]


def work_units(plan: Plan, *, replays: int, count: int) -> list[Unit]:
    """Every unit of the check, in a fixed order (the order of the phases)."""
    oracle_bytes = sum(plan.oracle_sizes.values())
    units: list[Unit] = []
    if plan.trusted_oracle_files:
        units += class_units("oracle", plan.oracle_sizes, count)
    if plan.base_oracle_files:
        units.append(Unit(BASE_ORACLE, collect_only_weight(plan.oracle_sizes)))
    # A replay runs with -x: about half the oracle class before its killer.
    units += [Unit(KNOWN_BAD, oracle_bytes // 2 + STARTUP_BYTES, index=i) for i in range(replays)]
    if plan.property_files:
        units += class_units("property", plan.property_sizes, count)
    units += class_units("untrusted", plan.untrusted_sizes, count)
    if plan.flake_candidates:
        units.append(Unit(FLAKE, sum(plan.flake_sizes.values()) + STARTUP_BYTES))
    return units


def assign(units: Sequence[Unit], count: int) -> dict[str, int]:
    """Heaviest unit first onto the least loaded machine; ties by name, so every
    machine computes the same assignment."""
    loads = [0] * count
    out = {}
    for unit in sorted(units, key=lambda u: (-u.weight, u.name)):
        machine = loads.index(min(loads))
        out[unit.name] = machine
        loads[machine] += unit.weight
    return out


def plan_digest(plan: Plan, units: Sequence[Unit]) -> str:
    """What the N machines must agree on: the trees, the class rules and files, and
    the units (with their file shares)."""
    document = {
        "base": plan.base,
        "head": plan.head,
        "trusted": plan.trusted,
        "property_tree": plan.property_tree,
        "oracle_files": plan.trusted_oracle_files,
        "base_oracle_files": plan.base_oracle_files,
        "property_files": plan.property_files,
        "flake_candidates": plan.flake_candidates,
        "untrusted_deny": plan.untrusted_deny,
        "rules": [
            r.to_json()
            for r in (
                plan.head_rules,
                plan.base_oracle_rules,
                plan.trusted_oracle_rules,
                plan.property_rules,
            )
        ],
        "units": [[u.name, None if u.shard is None else u.shard.to_json()] for u in units],
    }
    text = json.dumps(document, sort_keys=True, default=sorted)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
