"""Split one trust class over several pytest processes, by file, and merge back.

The untrusted class is usually most of a suite, and its stage runs alone (trusted
results must be read before its code starts), so with `--jobs 2` one core would
idle. Each shard collects only the files assigned to it (pytest never imports
the others), so the partition is complete and disjoint: every file belongs to
exactly one shard, by a size-balanced assignment for the files git knows and a
stable hash for any other file pytest finds.

PYTEST_DONT_REWRITE: the plugin imports this module, so it uses only the
standard library.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Below this much test source per process, the extra pytest start-up costs more
# than the split saves; a pytest start-up weighs about as much as running this
# much test source.
MIN_BYTES_PER_SHARD = 16 * 1024
STARTUP_BYTES = 32 * 1024


@dataclass(frozen=True)
class Shard:
    """Part `index` of `count` of the files; `within`: of the files of that shard
    only (a CI machine's share of a class, split again over its own cores)."""

    index: int
    count: int
    assign: Mapping[str, int] = field(default_factory=dict)
    within: Shard | None = None

    def owns(self, path: str) -> bool:
        if self.within is not None and not self.within.owns(path):
            return False
        return shard_of(path, self.count, self.assign) == self.index

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "index": self.index,
            "count": self.count,
            "assign": dict(self.assign),
        }
        if self.within is not None:
            out["within"] = self.within.to_json()
        return out


def owns(shard: Mapping[str, Any], path: str) -> bool:
    """Whether the shard (as `Shard.to_json` writes it) and every shard it lies
    within hold `path`; the plugin calls this on the spec it was given."""
    within = shard.get("within")
    if within is not None and not owns(within, path):
        return False
    index: int = shard["index"]
    return shard_of(path, shard["count"], shard["assign"]) == index


def collect_only_weight(sizes: Mapping[str, int]) -> int:
    """What a `--collect-only` process of these files weighs against running them:
    a start-up, then importing a file (its asserts not rewritten) costs about an
    eighth of running its tests (toolz's oracle files in fresh worktrees, start-ups
    left out: 0.07 s to collect 130 items that take 0.6 s to run)."""
    return STARTUP_BYTES + sum(sizes.values()) // 8


def shard_of(path: str, count: int, assign: Mapping[str, int]) -> int:
    """The shard a file belongs to; the plugin computes the same (stdlib only)."""
    if path in assign:
        return assign[path]
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) % count


def shard_count(sizes: Mapping[str, int], jobs: int, min_bytes: int = MIN_BYTES_PER_SHARD) -> int:
    """How many processes: at most one per job and per file, and (with `min_bytes`)
    at least that much source in each."""
    most = sum(sizes.values()) // min_bytes if min_bytes > 0 else len(sizes)
    return max(1, min(jobs, len(sizes), most))


def balance(sizes: Mapping[str, int], count: int, last_preload: int = 0) -> dict[str, int]:
    """Largest file first onto the lightest shard (LPT): near-even source per shard.

    `last_preload` is work already queued before the last shard on its core (a
    smaller process sharing that core), so the last shard gets less.
    """
    loads = [0] * count
    loads[-1] = last_preload
    assign = {}
    for path in sorted(sizes, key=lambda p: (-sizes[p], p)):
        lightest = loads.index(min(loads))
        assign[path] = lightest
        loads[lightest] += sizes[path]
    return assign


def shards(
    sizes: Mapping[str, int],
    jobs: int,
    last_preload: int = 0,
    within: Shard | None = None,
    min_bytes: int = MIN_BYTES_PER_SHARD,
) -> list[Shard]:
    """The shards for files of these sizes (a single shard: no split). With
    `within`, only its files are split, and each shard lies within it."""
    if within is not None:
        sizes = {p: n for p, n in sizes.items() if within.owns(p)}
    count = shard_count(sizes, jobs, min_bytes)
    assign = balance(sizes, count, last_preload if count > 1 else 0)
    while count > 1 and len(set(assign.values())) < count:
        # A preload heavier than the files leaves the last shard none: a process
        # that would collect nothing. Fewer shards, then.
        count -= 1
        assign = balance(sizes, count, last_preload if count > 1 else 0)
    return [Shard(i, count, assign, within) for i in range(count)]
