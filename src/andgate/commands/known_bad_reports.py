"""What `known-bad harvest` and `known-bad mutants` leave behind: the summary of a run,
printed and written as `report.md`/`report.json` (harvest) or `mutants.json` (mutants),
and the candidate fixtures, in the proposals folder the session claimed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from andgate.check.discrimination.mutate import Mutant
from andgate.commands.common import plural, table
from andgate.commands.harvest import Fate, Harvested
from andgate.commands.known_bad_session import Session

# the revert applies cleanly to HEAD
APPLIED = (Fate.KILLED, Fate.MISSED, Fate.UNPROVEN, Fate.COSMETIC)

HARVEST_SCHEMA = "andgate.harvest/1"
MUTANTS_SCHEMA = "andgate.mutants/1"


@dataclass(frozen=True)
class HarvestSummary:
    session: Session
    since: str | None
    limit: int
    budget: float
    scanned: int
    results: Sequence[Harvested]
    seconds: float

    def of(self, fate: Fate) -> list[Harvested]:
        return [r for r in self.results if r.fate is fate]

    def payload(self) -> dict[str, Any]:
        return {
            "schema": HARVEST_SCHEMA,
            "head": self.session.head,
            "since": self.since,
            "limit": self.limit,
            "budget": self.budget,
            "commits_scanned": self.scanned,
            "commits": len(self.results),
            "applied": sum(r.fate in APPLIED for r in self.results),
            "counts": {fate.value: len(self.of(fate)) for fate in Fate},
            "seconds": round(self.seconds, 1),
            "results": [harvested_json(r) for r in self.results],
        }

    def render_text(self) -> str:
        counts = self.payload()["counts"]
        lines = [
            f"andgate known-bad harvest: HEAD {self.session.head[:12]}, "
            f"{plural(len(self.results), 'commit')} that changed production code "
            f"(of {self.scanned} walked), {self.seconds:.1f}s",
            f"  {counts['killed']} killed (proposed), {counts['missed']} missed by the oracle "
            f"class, {counts[Fate.UNPROVEN.value]} let through but not shown to be a fix, "
            f"{counts['stale']} no longer apply, {counts['cosmetic']} cosmetic, "
            f"{counts['error']} errors, "
            f"{counts['over budget']} not tried (budget)",
        ]
        remembered = sum(r.remembered for r in self.results)
        if remembered:
            lines.append(
                f"  {remembered} let through in an earlier run under the same oracle files "
                "(not replayed; --no-cache replays them)"
            )
        for title, fate in (("proposed", Fate.KILLED), ("missed", Fate.MISSED)):
            rows = [(r.commit.sha[:10], r.commit.subject[:60]) for r in self.of(fate)]
            if rows:
                lines += ["", f"{title}:", *table(rows)]
        lines += ["", f"report: {self.session.out / 'report.md'}"]
        return "\n".join(lines) + "\n"

    def render_markdown(self) -> str:
        counts = self.payload()["counts"]
        lines = [
            "# Known-bad candidates from history",
            "",
            f"HEAD `{self.session.head[:12]}`; {len(self.results)} commits that changed "
            f"production code ({self.scanned} walked, limit {self.limit}, budget "
            f"{self.budget:.0f}s), {self.seconds:.1f}s.",
            "",
            "These are proposals. To promote one, an owner moves it into "
            f"`{self.session.config.manifest.known_bad_dir}` (a trust-root change).",
            "",
            f"## Proposed fixtures ({counts['killed']})",
            "",
        ]
        lines += md_table(
            ("fixture", "commit", "subject", "files", "killed by", "time"),
            [
                (
                    f"`{r.fixture_name}.patch`",
                    r.commit.sha[:10],
                    r.commit.subject,
                    ", ".join(r.commit.files),
                    r.killers[0] if r.killers else "",
                    f"{r.seconds:.1f}s",
                )
                for r in self.of(Fate.KILLED)
            ],
        )
        lines += [
            "",
            f"## Fixes the oracle class misses ({counts['missed']})",
            "",
            "Each revert applies to HEAD, every oracle item still passes, and the tests the "
            "commit itself added or changed fail on it (and pass on HEAD): a bug the project "
            "once fixed that its oracles would let back in.",
            "",
        ]
        lines += md_table(
            ("commit", "subject", "files", "shown by", "time", "revert"),
            [
                (
                    r.commit.sha[:10],
                    r.commit.subject,
                    ", ".join(r.commit.files),
                    ", ".join(r.evidence[:3]),
                    f"{r.seconds:.1f}s",
                    f"`missed/{r.fixture_name}.patch`",
                )
                for r in self.of(Fate.MISSED)
            ],
        )
        lines += [
            "",
            f"## Let through, not shown to be a fix ({counts[Fate.UNPROVEN.value]})",
            "",
            "Each revert applies to HEAD and every oracle item still passes, but nothing "
            "shows the commit fixed a bug: it changed no test outside the oracle files, or "
            "none of its tests fails on the revert (a refactor, a feature, maintenance).",
            "",
        ]
        lines += md_table(
            ("commit", "subject", "files", "time"),
            [
                (
                    r.commit.sha[:10],
                    r.commit.subject,
                    ", ".join(r.commit.files),
                    f"{r.seconds:.1f}s" + (" (remembered)" if r.remembered else ""),
                )
                for r in self.of(Fate.UNPROVEN)
            ],
        )
        shown = (Fate.KILLED, Fate.MISSED, Fate.UNPROVEN)
        others = [r for r in self.results if r.fate not in shown]
        lines += ["", f"## Not replayed ({len(others)})", ""]
        lines += md_table(
            ("commit", "subject", "why"),
            [(r.commit.sha[:10], r.commit.subject, r.problem or r.fate.value) for r in others],
        )
        return "\n".join(lines) + "\n"


def harvested_json(result: Harvested) -> dict[str, Any]:
    return {
        "commit": result.commit.sha,
        "subject": result.commit.subject,
        "files": list(result.commit.files),
        "fate": result.fate.value,
        "killed_by": list(result.killers),
        "seconds": round(result.seconds, 2),
        "problem": result.problem,
        "fixture": f"{result.fixture_name}.patch" if result.fate is Fate.KILLED else None,
        "shown_by": list(result.evidence),
        "remembered": result.remembered,
    }


def write_harvest(summary: HarvestSummary) -> None:
    folder = summary.session.folder
    assert folder is not None
    with folder:
        for result in summary.of(Fate.KILLED):
            folder.put(f"{result.fixture_name}.patch", result.patch)
        for result in summary.of(Fate.MISSED):
            folder.put(f"missed/{result.fixture_name}.patch", result.patch)
        folder.put("report.json", json_bytes(summary.payload()))
        folder.put("report.md", summary.render_markdown().encode("utf-8"))


@dataclass(frozen=True)
class MutantRun:
    mutant: Mutant
    status: str  # killed, survived, error, not run
    killers: tuple[str, ...] = ()
    seconds: float = 0.0
    problem: str = ""


def mutant_fixture_name(mutant: Mutant) -> str:
    stem = mutant.path.rsplit("/", 1)[-1].removesuffix(".py")
    function = mutant.function.replace(".", "_")
    return f"kb_mut_{stem}_{function}_{mutant.line}_{mutant.kind}.patch"


@dataclass(frozen=True)
class MutantsSummary:
    session: Session
    runs: Sequence[MutantRun]
    seconds: float
    budget: float

    def per_function(self) -> list[tuple[str, str, int, int, int]]:
        """(path, function, mutants, killed, survived) in source order."""
        rows: dict[tuple[str, str], list[int]] = {}
        for run in self.runs:
            counts = rows.setdefault((run.mutant.path, run.mutant.function), [0, 0, 0])
            counts[0] += 1
            counts[1] += run.status == "killed"
            counts[2] += run.status == "survived"
        return [(p, f, *c) for (p, f), c in rows.items()]  # type: ignore[misc]

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.runs)

    def payload(self, chosen: Sequence[MutantRun]) -> dict[str, Any]:
        return {
            "schema": MUTANTS_SCHEMA,
            "head": self.session.head,
            "budget": self.budget,
            "seconds": round(self.seconds, 1),
            "counts": {s: self.count(s) for s in ("killed", "survived", "error", "not run")},
            "functions": [
                {"path": p, "function": f, "mutants": n, "killed": k, "survived": s}
                for p, f, n, k, s in self.per_function()
            ],
            "mutants": [
                {
                    "path": r.mutant.path,
                    "function": r.mutant.function,
                    "line": r.mutant.line,
                    "kind": r.mutant.kind,
                    "description": r.mutant.description,
                    "status": r.status,
                    "killed_by": list(r.killers),
                    "seconds": round(r.seconds, 2),
                    "problem": r.problem,
                }
                for r in self.runs
            ],
            "written": [mutant_fixture_name(r.mutant) for r in chosen],
        }

    def render_text(self, chosen: Sequence[MutantRun]) -> str:
        lines = [
            f"andgate known-bad mutants: HEAD {self.session.head[:12]}, "
            f"{plural(len(self.runs), 'mutant')}: {self.count('killed')} killed, "
            f"{self.count('survived')} survived, {self.count('error')} errors, "
            f"{self.count('not run')} not run (budget), {self.seconds:.1f}s",
            "",
        ]
        rows = [("file", "function", "mutants", "killed", "survived")]
        rows += [(p, f, str(n), str(k), str(s)) for p, f, n, k, s in self.per_function()]
        lines += table(rows)
        survivors = [r for r in self.runs if r.status == "survived"]
        if survivors:
            lines += ["", "survivors (where the oracles are blind):"]
            lines += table([where(r) for r in survivors])
        if chosen:
            lines += ["", f"proposed in {self.session.out}:"]
            lines += [f"  {mutant_fixture_name(r.mutant)}" for r in chosen]
        return "\n".join(lines) + "\n"


def where(run: MutantRun) -> tuple[str, str, str]:
    m = run.mutant
    return (f"{m.path}:{m.line}", m.function, m.description)


def write_mutants(summary: MutantsSummary, chosen: Sequence[MutantRun]) -> None:
    folder = summary.session.folder
    assert folder is not None
    with folder:
        for run in chosen:
            folder.put(mutant_fixture_name(run.mutant), run.mutant.patch)
        folder.put("mutants.json", json_bytes(summary.payload(chosen)))


def md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return ["(none)"]
    cells = [header, tuple("---" for _ in header), *rows]
    return ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]


def json_bytes(payload: dict[str, Any]) -> bytes:
    return (json.dumps(payload, indent=2, sort_keys=False) + "\n").encode("utf-8")
