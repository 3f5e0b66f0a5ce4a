"""The last phase, once every run is in: each item with its class and outcome (the
inventory), the changed files sorted by who may change them (`authorship.py`), and
the freezes' facts (`freeze.py`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from andgate.check.inventory.items import (
    build_inventory,
    ineffective_freezes,
    oracle_holders,
)
from andgate.check.production.phase import ScanResult, with_installed_hooks, with_unscanned_imports
from andgate.check.state import CheckState, RunKey, RunName
from andgate.git import Change
from andgate.process.results import RunResult
from andgate.records import ChangeFacts, FreezeFacts, InventoryRecord
from andgate.trust.authorship import adopting, oracle_file_rule, sort_changes
from andgate.trust.config import BaseConfig
from andgate.trust.freeze import freeze_facts
from andgate.trust.paths import ConfigChanges, is_test_module, matching


@dataclass(frozen=True)
class InventoryOutcome:
    """Each item with its class and outcome, the changed files sorted by who may
    change them, and the freezes' facts."""

    inventory: list[InventoryRecord]
    changes: ChangeFacts
    freezes: FreezeFacts


def run_inventory_phase(
    state: CheckState,
    runs: Mapping[RunKey, RunResult],
    config: BaseConfig,
    changes: Sequence[Change],
    differs: ConfigChanges,
    scan: ScanResult,
    *,
    approved_by: tuple[str, ...],
    today: dt.date,
    approved_head: bool = True,
    base_oracle: Collection[str] | None = None,
    agent_files: Collection[str] = (),
) -> InventoryOutcome:
    """`runs`: every test phase's, as the pipeline recorded them. `base_oracle`:
    base's files matching the oracle globs, when head's own are not trusted (no
    approval, no adoption): only those are oracle files. `agent_files`: while
    adopting, the agent instruction files `init --agents` wrote."""
    inventory = build_inventory(
        *(
            runs.get(RunKey(n))
            for n in (RunName.UNTRUSTED, RunName.ORACLE, RunName.PROPERTY, RunName.FLAKE)
        )
    )
    holders = oracle_holders(inventory, runs.get(RunKey(RunName.BASE_ORACLE)))
    allow = config.manifest.production_scan_allow
    scan = with_unscanned_imports(
        scan, runs.values(), changes, allow, is_test_side=config.test_side.holds
    )
    scan = with_installed_hooks(scan, state.environment)
    changes_facts = sort_changes(
        changes,
        config.manifest,
        is_oracle_file=oracle_file_rule(config.manifest, holders, base_oracle),
        config_differs=differs,
        approved_by=approved_by,
        earlier_commit_only=bool(approved_by) and not approved_head,
        test_side=config.test_side,
        scan=scan,
    )
    if base_oracle is not None:
        added = matching(
            (p for p in changes_facts.test_paths if is_test_module(p)),
            config.manifest.oracle.globs,
        ) - set(base_oracle)
        changes_facts = replace(changes_facts, added_under_oracle_globs=tuple(sorted(added)))
    if state.adopting:
        changes_facts = adopting(changes_facts, changes, agent_files)
    ineffective = ineffective_freezes(config.live_freeze_ids(today), inventory)
    return InventoryOutcome(
        inventory, changes_facts, freeze_facts(config.freezes, today, ineffective)
    )
