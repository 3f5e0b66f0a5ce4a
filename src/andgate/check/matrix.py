"""A check split over a CI matrix: `check --shard I/N` and `combine DIR...`.

A shard runs the same gate as `check`, but only the units that `units.assign`
gives machine I (the other machines run the rest), and writes what they
recorded to `bundle.json` instead of a verdict. `combine` reads the N bundles,
checks that they belong to one check and cover every unit exactly once, and
runs the gate again with every unit's result read back from them instead of
from pytest: the same code and the same pure verdict as one `check`, so the
verdict is the same. Any problem with the bundles is a GATE_ERROR.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from andgate.check.bundle import Bundle, BundleKey, Combined, Recorded, combined, render
from andgate.check.options import CheckOptions
from andgate.check.pipeline import gate_failing_closed
from andgate.check.state import CheckState
from andgate.check.units import Split
from andgate.errors import AndgateError
from andgate.exitcodes import Exit
from andgate.report.artifacts import Artifacts, write_artifacts
from andgate.report.folder import BUNDLE, claim_artifacts_for, write_bundle
from andgate.verdict import Verdict, decide


@dataclass(frozen=True)
class ShardOutcome:
    split: Split
    path: Path
    ran: tuple[str, ...]
    units: int
    errors: tuple[str, ...]

    @property
    def exit_code(self) -> Exit:
        """OK: this part ran and its bundle holds it; COULD_NOT_RUN: it could not run
        (the bundle says why, and `combine` turns that into GATE_ERROR)."""
        return Exit.COULD_NOT_RUN if self.errors else Exit.OK


def run_shard(opts: CheckOptions) -> ShardOutcome:
    """Run this machine's units; always write the bundle, even after a failure."""
    assert opts.split is not None
    state = CheckState()
    folder = claim_artifacts_for(opts.repo, opts.artifacts)
    try:
        gate_failing_closed(opts, state)
        bundle = shard_bundle(opts, state)
        path = write_bundle(folder, BUNDLE, render(bundle))
    finally:
        folder.close()
    errors = (
        *bundle.recorded.gate_errors,
        *([state.found.manifest_error] if state.found.manifest_error else []),
    )
    return ShardOutcome(opts.split, path, bundle.ran, len(state.unit_names or ()), errors)


def shard_bundle(opts: CheckOptions, state: CheckState) -> Bundle:
    """What this machine's units recorded, keyed by what every machine shares."""
    assert opts.split is not None
    runs = {unit: state.runs[name] for unit, name in state.units_ran.items() if name in state.runs}
    by_name = {r.name: r for r in state.replays}
    fixtures = list(state.patches)  # known-bad fixtures, in the config's order
    replays = {
        f"known-bad/{i}": by_name[name] for i, name in enumerate(fixtures) if name in by_name
    }
    files = state.captured.of_runs({state.units_ran[u] for u in runs})
    return Bundle(
        index=opts.split.index,
        count=opts.split.count,
        key=BundleKey(
            base=state.base,
            head=state.head,
            manifest_digest=state.manifest_digest,
            plan_digest=state.plan_digest,
            units=state.unit_names,
            options=opts.bundle_options(),
        ),
        ran=(*runs, *replays),
        recorded=Recorded(
            runs=runs,
            replays=replays,
            files=files,
            discrimination=tuple(d for d in [state.found.discrimination] if d is not None),
            gate_errors=tuple(state.gate_errors),
        ),
        manifest_error=state.found.manifest_error,
    )


def run_combine(places: Sequence[Path], opts: CheckOptions) -> tuple[Verdict, Artifacts]:
    """The verdict of N shard bundles; always writes the artifacts. Options the
    shards recorded (base, head, manifest, --today, approvals...) are theirs."""
    state = CheckState()
    folder = claim_artifacts_for(opts.repo, opts.artifacts)
    try:
        try:
            key, count, recorded = combined(list(places))
            opts = combine_options(opts, key, count, recorded)
        except AndgateError as exc:
            state.gate_errors.append(str(exc))
        else:
            gate_failing_closed(opts, state)
        verdict = decide(state.facts())
        return verdict, write_artifacts(folder, state.report_context(verdict, opts.today))
    finally:
        folder.close()


def combine_options(
    opts: CheckOptions, key: BundleKey, count: int, recorded: Recorded
) -> CheckOptions:
    o = key.options
    try:
        return replace(
            opts,
            base=key.base,
            head=key.head or "HEAD",
            manifest=str(o["manifest"]),
            today=dt.date.fromisoformat(str(o["today"])),
            hypothesis_seed=None if o["hypothesis_seed"] is None else int(o["hypothesis_seed"]),
            approved_by=tuple(str(n) for n in o["approved_by"]),
            approved_by_env=tuple(str(n) for n in o["approved_by_env"]),
            approvals=str(o["approvals"]),
            discrimination=bool(o["discrimination"]),
            discrimination_budget=_budget(o["discrimination_budget"]),
            evidence=bool(o.get("evidence", True)),
            evidence_budget=_budget(o.get("evidence_budget")),
            split=Split(0, count),
            combine=Combined(key, recorded),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AndgateError(
            f"the bundles' options are malformed ({exc}); re-run the shards"
        ) from exc


def _budget(value: Any) -> float | None:
    """The discrimination budget a bundle recorded (None: the default)."""
    return None if value is None else float(value)
