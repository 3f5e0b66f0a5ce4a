"""The last phase, once every run is in: each item with its class and outcome (the
inventory), the changed files sorted by who may change them (`authorship.py`), and
the freezes' facts (`freeze.py`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import replace

from andgate.authorship import oracle_file_rule, sort_changes
from andgate.config import BaseConfig
from andgate.freeze import freeze_facts
from andgate.git import Change
from andgate.inventory import build_inventory, ineffective_freezes, oracle_holders
from andgate.paths import ConfigChanges
from andgate.phases.production import ScanResult
from andgate.state import CheckState, RunName


def run_inventory_phase(
    state: CheckState,
    config: BaseConfig,
    changes: Sequence[Change],
    differs: ConfigChanges,
    scan: ScanResult,
    *,
    approved_by: tuple[str, ...],
    today: dt.date,
) -> None:
    runs = state.runs
    state.inventory = build_inventory(
        *(runs.get(n) for n in (RunName.UNTRUSTED, RunName.ORACLE, RunName.PROPERTY, RunName.FLAKE))
    )
    holders = oracle_holders(state.inventory, runs.get(RunName.BASE_ORACLE))
    changes_facts = sort_changes(
        changes,
        config.manifest,
        is_oracle_file=oracle_file_rule(config.manifest, holders),
        config_differs=differs,
        approved_by=approved_by,
        test_side=config.test_side,
        scan=scan,
    )
    state.changes = replace(changes_facts, adopting=state.adopting)
    ineffective = ineffective_freezes(config.live_freeze_ids(today), state.inventory)
    state.freezes = freeze_facts(config.freezes, today, ineffective)
