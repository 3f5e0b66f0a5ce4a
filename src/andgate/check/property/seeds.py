"""Seeds: what each property item really ran with.

A property is trusted only with the seeds it ran recorded: the value of its
`seed` parameter, or the Hypothesis seed andgate passed. A property file none
of whose items ran with a seed proves nothing (NO_SEEDS): `SEEDS = []` turns a
parametrised property into one skipped item and a green suite.
"""

from __future__ import annotations

from collections.abc import Iterable

from andgate.process.results import RunResult, collection_error_lines
from andgate.records import ItemResult, PropertyFacts


def default_hypothesis_seed(base_sha: str) -> int:
    """Deterministic per base commit: re-running the gate reproduces the run."""
    return int(base_sha[:8], 16)


def property_facts(
    result: RunResult | None,
    candidate_files: Iterable[str],
    *,
    required: bool,
    every_candidate_counts: bool,
    empty_because: str = "",
) -> PropertyFacts:
    """`every_candidate_counts`: without property markers every accepted file is a
    property file, even one whose items all vanished. `empty_because` says why the
    class may be empty (a missing invariants file), for the NO_PROPERTY message."""
    if result is None:
        return PropertyFacts(required=required, empty_because=empty_because)
    files: dict[str, list[str]] = {}
    if every_candidate_counts:
        files = {path: [] for path in candidate_files}
    results = []
    for item in result.selected("property"):
        nodeid = item.facts.nodeid
        files.setdefault(item.facts.path, []).append(nodeid)
        results.append(ItemResult(nodeid, result.outcome(nodeid), result.message(nodeid)))
    wanted = {r.nodeid for r in results}
    return PropertyFacts(
        results=tuple(results),
        collection_errors=collection_error_lines(result),
        error=result.error,
        files={path: tuple(ids) for path, ids in files.items()},
        seeds={n: tuple(s) for n, s in result.seeds.items() if n in wanted},
        required=required,
        empty_because=empty_because,
    )
