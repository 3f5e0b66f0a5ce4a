"""Shard bundles: one machine's part of a check, written by `check --shard I/N`
and read back by `combine`.

A bundle names what the machines must agree on (andgate's version, base, head,
the manifest's digest, the plan's digest and its unit list, the check's options)
and holds what its units recorded: each class unit's run (items, reports,
seeds, collection errors), each replay's facts, the discrimination report of
its untrusted items, its logs and JUnit files, and any gate error it hit.

Its sha256 covers everything else in it, so a bundle edited by hand (or cut
short in transfer) is refused. That is a check against accidents, not a
signature: a bundle is as trustworthy as the CI job that wrote it, which is
why the combine job belongs to the same workflow run as the shards.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from andgate import __version__
from andgate.errors import BundleError
from andgate.process.results import CollectedItem, RunResult
from andgate.records import DiscriminationFacts, ItemFacts, ReplayFacts
from andgate.report.folder import BUNDLE as FILENAME

SCHEMA = "andgate.bundle/1"

MAX_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True)
class Recorded:
    """What the N bundles recorded, by unit name."""

    runs: Mapping[str, RunResult] = field(default_factory=dict)
    replays: Mapping[str, ReplayFacts] = field(default_factory=dict)
    files: Mapping[str, bytes] = field(default_factory=dict)  # logs and JUnit files
    discrimination: tuple[DiscriminationFacts, ...] = ()
    gate_errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class BundleKey:
    """What every bundle of one check must share."""

    base: str | None
    head: str | None
    manifest_digest: str | None
    plan_digest: str | None
    units: tuple[str, ...] | None
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "head": self.head,
            "manifest_digest": self.manifest_digest,
            "plan_digest": self.plan_digest,
            "units": None if self.units is None else list(self.units),
            "options": dict(self.options),
        }


@dataclass(frozen=True)
class Bundle:
    index: int
    count: int
    key: BundleKey
    ran: tuple[str, ...]
    recorded: Recorded
    manifest_error: str | None = None


# -- writing ------------------------------------------------------------------------------


def render(bundle: Bundle) -> bytes:
    recorded = bundle.recorded
    body = {
        "schema": SCHEMA,
        "andgate": __version__,
        "shard": {"index": bundle.index, "count": bundle.count},
        "key": bundle.key.to_json(),
        "ran": list(bundle.ran),
        "runs": {u: run_to_json(r) for u, r in recorded.runs.items()},
        "replays": {u: replay_to_json(r) for u, r in recorded.replays.items()},
        "discrimination": [discrimination_to_json(d) for d in recorded.discrimination],
        "files": {k: base64.b64encode(v).decode("ascii") for k, v in recorded.files.items()},
        "gate_errors": list(recorded.gate_errors),
        "manifest_error": bundle.manifest_error,
    }
    body["sha256"] = _digest(body)
    return (json.dumps(body, indent=1, sort_keys=True) + "\n").encode("utf-8")


def _digest(body: Mapping[str, Any]) -> str:
    text = json.dumps({k: v for k, v in body.items() if k != "sha256"}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_to_json(run: RunResult) -> dict[str, Any]:
    return {
        "label": run.label,
        "exit_code": run.exit_code,
        "seconds": run.seconds,
        "items": [
            {
                "facts": i.facts.to_json(),
                "class": i.cls,
                "why": i.why,
                "skip_mark": i.skip_mark,
                "params": i.params,
            }
            for i in run.items
        ],
        "reports": {k: dict(v) for k, v in run.reports.items()},
        "seeds": {k: list(v) for k, v in run.seeds.items()},
        "collection_errors": [list(e) for e in run.collection_errors],
        "error": run.error,
        "unscanned": [list(u) for u in run.unscanned],
    }


def run_from_json(data: Mapping[str, Any]) -> RunResult:
    return RunResult(
        label=str(data["label"]),
        exit_code=None if data["exit_code"] is None else int(data["exit_code"]),
        seconds=float(data["seconds"]),
        items=tuple(
            CollectedItem(
                ItemFacts.from_json(i["facts"]),
                str(i["class"]),
                str(i["why"]),
                None if i["skip_mark"] is None else str(i["skip_mark"]),
                None if i["params"] is None else str(i["params"]),
            )
            for i in data["items"]
        ),
        reports={str(k): dict(v) for k, v in data["reports"].items()},
        seeds={str(k): tuple(v) for k, v in data["seeds"].items()},
        collection_errors=tuple((str(n), str(m)) for n, m in data["collection_errors"]),
        error=None if data["error"] is None else str(data["error"]),
        unscanned=tuple(
            (str(m), str(p), str(t), str(w)) for m, p, t, w in data.get("unscanned", ())
        ),
    )


def replay_to_json(replay: ReplayFacts) -> dict[str, Any]:
    return {
        "name": replay.name,
        "applied": replay.applied,
        "failed": list(replay.failed),
        "problem": replay.problem,
        "error": replay.error,
        "seconds": replay.seconds,
    }


def replay_from_json(data: Mapping[str, Any]) -> ReplayFacts:
    return ReplayFacts(
        name=str(data["name"]),
        applied=bool(data["applied"]),
        failed=tuple(str(f) for f in data["failed"]),
        problem=str(data["problem"]),
        error=None if data["error"] is None else str(data["error"]),
        seconds=float(data["seconds"]),
    )


def discrimination_to_json(facts: DiscriminationFacts) -> dict[str, Any]:
    return {
        "items": [[n, list(k)] for n, k in facts.items],
        "against": list(facts.against),
        "required": facts.required,
        "incomplete": facts.incomplete,
        "skipped": list(facts.skipped),
        "budget": facts.budget,
    }


def discrimination_from_json(data: Mapping[str, Any]) -> DiscriminationFacts:
    return DiscriminationFacts(
        items=tuple((str(n), tuple(str(x) for x in k)) for n, k in data["items"]),
        against=tuple(str(a) for a in data["against"]),
        required=bool(data["required"]),
        incomplete=bool(data["incomplete"]),
        skipped=tuple(str(s) for s in data.get("skipped", ())),
        budget=None if data.get("budget") is None else float(data["budget"]),
    )


# -- reading ------------------------------------------------------------------------------


def bundle_path(place: Path) -> Path:
    """A shard's artifacts folder holds its bundle; a file is taken as the bundle."""
    return place / FILENAME if place.is_dir() else place


def load(place: Path) -> Bundle:
    path = bundle_path(place)
    try:
        if path.is_symlink() or not path.is_file():
            raise BundleError(
                f"{path}: no shard bundle there; pass the folders that "
                "`andgate check --shard I/N --artifacts DIR` wrote"
            )
        if path.stat().st_size > MAX_BYTES:
            raise BundleError(f"{path}: larger than {MAX_BYTES >> 20} MiB; not a bundle")
        body = json.loads(path.read_bytes())
    except OSError as exc:
        raise BundleError(f"{path}: cannot read the bundle ({exc.strerror})") from exc
    except (ValueError, RecursionError) as exc:
        raise BundleError(f"{path}: not a bundle (not JSON: {exc})") from exc
    return parse(path, body)


def parse(path: Path, body: Any) -> Bundle:
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        raise BundleError(f"{path}: not an andgate bundle (schema {SCHEMA} expected)")
    if body.get("sha256") != _digest(body):
        raise BundleError(
            f"{path}: edited after andgate wrote it (its sha256 does not match); re-run that shard"
        )
    if body.get("andgate") != __version__:
        raise BundleError(
            f"{path}: written by andgate {body.get('andgate')}, this is {__version__}; "
            "run every shard and combine with the same andgate"
        )
    try:
        key = body["key"]
        recorded = Recorded(
            runs={str(u): run_from_json(r) for u, r in body["runs"].items()},
            replays={str(u): replay_from_json(r) for u, r in body["replays"].items()},
            files={str(k): base64.b64decode(v, validate=True) for k, v in body["files"].items()},
            discrimination=tuple(discrimination_from_json(d) for d in body["discrimination"]),
            gate_errors=tuple(str(e) for e in body["gate_errors"]),
        )
        return Bundle(
            index=int(body["shard"]["index"]),
            count=int(body["shard"]["count"]),
            key=BundleKey(
                base=key["base"],
                head=key["head"],
                manifest_digest=key["manifest_digest"],
                plan_digest=key["plan_digest"],
                units=None if key["units"] is None else tuple(str(u) for u in key["units"]),
                options=dict(key["options"]),
            ),
            ran=tuple(str(u) for u in body["ran"]),
            recorded=recorded,
            manifest_error=body.get("manifest_error"),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BundleError(f"{path}: a malformed bundle ({exc.__class__.__name__}: {exc})") from exc


def combined(paths: Sequence[Path]) -> tuple[BundleKey, int, Recorded]:
    """Read and check the N bundles of one check: the same key, every shard once,
    every unit once. Any problem is one BundleError naming the bundle and the fix."""
    if not paths:
        raise BundleError("combine: no bundle given; pass the N shards' artifacts folders")
    bundles = [(p, load(p)) for p in paths]
    first_path, first = bundles[0]
    for path, bundle in bundles[1:]:
        _same(first_path, first, path, bundle)
    count = first.count
    seen: dict[int, Path] = {}
    for path, bundle in bundles:
        if bundle.index in seen:
            raise BundleError(
                f"{path}: shard {bundle.index + 1}/{count} was given twice "
                f"(also {seen[bundle.index]}); pass each shard's bundle once"
            )
        seen[bundle.index] = path
    missing = [str(i + 1) for i in range(count) if i not in seen]
    if missing:
        raise BundleError(
            f"combine: shard {', '.join(missing)} of {count} missing; pass all {count} "
            "bundles (a shard that failed still writes one: re-run it)"
        )
    return first.key, count, _merge(first.key, bundles)


def _same(first_path: Path, first: Bundle, path: Path, bundle: Bundle) -> None:
    if bundle.count != first.count:
        raise BundleError(
            f"{path}: a shard of {bundle.count}, but {first_path} is a shard of "
            f"{first.count}; combine the bundles of one matrix"
        )
    mine, theirs = bundle.key.to_json(), first.key.to_json()
    for field_name in ("base", "head", "manifest_digest", "plan_digest", "units", "options"):
        if mine[field_name] != theirs[field_name]:
            raise BundleError(
                f"{path}: its {field_name.replace('_', ' ')} differs from {first_path}'s; "
                "every shard must check the same base, head and manifest with the same options"
            )


def _merge(key: BundleKey, bundles: Sequence[tuple[Path, Bundle]]) -> Recorded:
    owner: dict[str, Path] = {}
    errors: list[str] = []
    for path, bundle in bundles:
        errors += bundle.recorded.gate_errors
        for unit in bundle.ran:
            if unit in owner:
                raise BundleError(
                    f"{path}: unit {unit} also ran in {owner[unit]}; a unit belongs to "
                    "one shard (were the bundles made with different --shard counts?)"
                )
            if unit not in bundle.recorded.runs and unit not in bundle.recorded.replays:
                raise BundleError(f"{path}: names unit {unit} as run but holds no result")
            owner[unit] = path
        # A result for a unit the bundle does not name as run could silently
        # replace another bundle's result for that unit: refused.
        unnamed = sorted({*bundle.recorded.runs, *bundle.recorded.replays} - set(bundle.ran))
        if unnamed:
            raise BundleError(f"{path}: holds a result for unit {unnamed[0]}, which it did not run")
    units = key.units or ()
    unknown = sorted(set(owner) - set(units))
    if unknown:
        raise BundleError(f"{owner[unknown[0]]}: unit {unknown[0]} is not a unit of this check")
    absent = [u for u in units if u not in owner]
    if absent and not errors:
        raise BundleError(
            f"combine: unit {absent[0]} ran in no shard"
            f"{f' (and {len(absent) - 1} more)' if len(absent) > 1 else ''}; "
            "re-run the shards"
        )
    return Recorded(
        runs={u: r for _, b in bundles for u, r in b.recorded.runs.items()},
        replays={u: r for _, b in bundles for u, r in b.recorded.replays.items()},
        files={k: v for _, b in bundles for k, v in b.recorded.files.items()},
        discrimination=tuple(d for _, b in bundles for d in b.recorded.discrimination),
        gate_errors=tuple(errors),
    )


@dataclass(frozen=True)
class Combined:
    """The bundles' shared key and what their units recorded."""

    key: BundleKey
    recorded: Recorded
