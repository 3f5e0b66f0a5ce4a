"""`check --shard I/N` and `combine`: N machines give the verdict of one check,
and no set of bundles that is not exactly one check's N parts gives an allow."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from andgate.check import units
from andgate.check.bundle import FILENAME, _digest
from andgate.check.matrix import run_combine, run_shard
from andgate.check.pipeline import CheckOptions
from andgate.check.units import Split
from andgate.commands.sample import SAMPLE_TODAY
from conftest import Sample
from harness import build_test_sample
from stories import honest_fix, weakened_oracle

pytestmark = pytest.mark.slow


def _options(sample, head: str, **extra: Any) -> dict[str, Any]:
    return {
        "repo": sample.path,
        "base": sample.base,
        "head": head,
        "today": dt.date.fromisoformat(SAMPLE_TODAY),
        "jobs": 2,
        "timeout": 300,
        "cache_dir": None,
        # Room for every breakage: the default budget follows the classes' wall time,
        # which differs between one check and N shards on a loaded machine.
        "discrimination_budget": 300.0,
        **extra,
    }


def shard_all(sample, head: str, count: int, **extra: Any) -> list[Path]:
    folders = []
    for index in range(count):
        folder = sample.tmp / f"shard-{count}-{index}"
        outcome = run_shard(
            CheckOptions(
                **_options(sample, head, artifacts=folder, split=Split(index, count), **extra)
            )
        )
        assert outcome.exit_code == 0, outcome.errors
        assert (folder / FILENAME).is_file()
        assert not (folder / "verdict.json").exists()
        folders.append(folder)
    return folders


def combine(sample, folders: list[Path], out: Path | str = "combined") -> dict[str, Any]:
    folder = out / "combined" if isinstance(out, Path) else sample.tmp / out
    verdict, artifacts = run_combine(
        folders, CheckOptions(repo=sample.path, artifacts=folder, cache_dir=None)
    )
    payload = json.loads((artifacts.folder / "verdict.json").read_text(encoding="utf-8"))
    assert payload["verdict"] == verdict.decision.value
    return payload


def single(sample, head: str, **extra: Any) -> dict[str, Any]:
    from andgate.check.pipeline import run_check

    _verdict, artifacts = run_check(
        CheckOptions(**_options(sample, head, artifacts=sample.tmp / "single", **extra))
    )
    return json.loads((artifacts.folder / "verdict.json").read_text(encoding="utf-8"))


def essence(payload: dict[str, Any]) -> dict[str, Any]:
    """What must not depend on how many machines ran the check."""
    return {
        "verdict": payload["verdict"],
        "bits": payload["bits"],
        "reasons": payload["reasons"],
        "warnings": payload["warnings"],
        "counts": payload["counts"],
        "base": payload["base"],
        "head": payload["head"],
    }


def _tiny_shards(sizes, jobs, last_preload=0, within=None):
    """Split every class of the small sample over the machines too (its files are
    far below the size at which a real check would split a class)."""
    from andgate.plugin import shard

    return shard.shards({p: n + shard.MIN_BYTES_PER_SHARD for p, n in sizes.items()}, jobs)


@pytest.fixture
def split_classes(monkeypatch):
    monkeypatch.setattr(units, "shards", _tiny_shards)


@dataclass
class Checked:
    """A sample, an honest head, one check's verdict, and shard bundles for N."""

    sample: Sample
    head: str
    expected: dict[str, Any]
    folders: dict[int, list[Path]]


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> Iterator[Checked]:
    """Built once per module: every N and every tampering starts from these."""
    tmp = tmp_path_factory.mktemp("honest")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp))
        patch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
        patch.setattr(units, "shards", _tiny_shards)
        repo, base = build_test_sample(tmp / "sample")
        sample = Sample(repo, base, tmp)
        head = sample.change(honest_fix)
        expected = single(sample, head)
        folders = {n: shard_all(sample, head, n) for n in (1, 2, 3, 5)}
        yield Checked(sample, head, expected, folders)


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_combine_over_n_shards_is_one_check(honest, count):
    assert honest.expected["verdict"] == "allow"
    got = combine(honest.sample, honest.folders[count], f"combined-{count}")
    assert essence(got) == essence(honest.expected)


def test_combine_blocks_as_one_check_blocks(sample, split_classes):
    """An agent-weakened oracle and a failing agent test in one change: the
    oracle authorship and the untrusted class both block, alike."""

    def failing(repo):
        weakened_oracle(repo)
        repo.write({"tests/test_extra.py": "def test_one():\n    assert 1 == 2\n"})

    head = sample.change(failing)
    expected = single(sample, head)
    assert expected["verdict"] == "block"
    got = combine(sample, shard_all(sample, head, 3))
    codes = [r["code"] for r in got["reasons"]]
    assert {"ORACLE_AUTHORSHIP", "UNTRUSTED_FAILED"} <= set(codes), codes
    assert essence(got) == essence(expected)


def test_every_unit_runs_on_exactly_one_machine(honest):
    folders = honest.folders[3]
    bundles = [json.loads((f / FILENAME).read_text()) for f in folders]
    ran = [u for b in bundles for u in b["ran"]]
    assert sorted(ran) == sorted(bundles[0]["key"]["units"])
    assert len(ran) == len(set(ran))
    assert any(u.startswith("untrusted/1") for u in ran)  # the class really was split


def test_the_combined_artifacts_hold_every_class_junit(honest, tmp_path):
    _verdict, artifacts = run_combine(
        honest.folders[3], CheckOptions(repo=honest.sample.path, artifacts=tmp_path / "out")
    )
    for name, test in [
        ("untrusted.xml", "test_slugify_collapses_separators"),
        ("oracle.xml", "test_chunk_even"),
        ("oracle.xml", "test_mean"),
        ("flake.xml", "test_mean_is_fast"),
    ]:
        assert test in (artifacts.folder / name).read_text(encoding="utf-8"), name


# -- tampered bundle sets block -------------------------------------------------------


@pytest.fixture
def three(honest, tmp_path) -> tuple[Checked, list[Path]]:
    """Copies of the three bundles of the honest change, to tamper with."""
    copies = []
    for folder in honest.folders[3]:
        copies.append(tmp_path / folder.name)
        shutil.copytree(folder, copies[-1])
    return honest, copies


def _edit(folder: Path, change) -> None:
    path = folder / FILENAME
    body = json.loads(path.read_text())
    change(body)
    path.write_text(json.dumps(body))


def _reseal(body: dict[str, Any]) -> None:
    body["sha256"] = _digest(body)


def _gate_error(payload: dict[str, Any]) -> str:
    assert payload["verdict"] == "block"
    details = [r["detail"] for r in payload["reasons"] if r["code"] == "GATE_ERROR"]
    assert details, payload["reasons"]
    return details[0]


def test_a_missing_bundle_blocks(three, tmp_path):
    honest, folders = three
    assert "missing" in _gate_error(combine(honest.sample, folders[:2], tmp_path))


def test_a_duplicate_bundle_blocks(three, tmp_path):
    honest, folders = three
    twice = [folders[0], folders[0], folders[1]]
    assert "twice" in _gate_error(combine(honest.sample, twice, tmp_path))


def test_a_bundle_of_another_base_blocks(three, tmp_path):
    honest, folders = three
    _edit(folders[2], lambda b: (b["key"].update(base="0" * 40), _reseal(b)))
    assert "base differs" in _gate_error(combine(honest.sample, folders, tmp_path))


def test_a_bundle_of_another_check_blocks(three, tmp_path):
    honest, folders = three
    other = honest.folders[2][1]  # shard 2 of a 2-shard run of the same change
    assert "shard of 2" in _gate_error(combine(honest.sample, [*folders[:2], other], tmp_path))


def test_edited_facts_block(three, tmp_path):
    honest, folders = three

    def flip(body):
        for run in body["runs"].values():
            for report in run["reports"].values():
                report["outcome"] = "failed"

    _edit(folders[1], flip)
    assert "edited" in _gate_error(combine(honest.sample, folders, tmp_path))


def test_a_resealed_bundle_of_another_plan_blocks(three, tmp_path):
    honest, folders = three
    _edit(folders[0], lambda b: (b["key"].update(plan_digest="f" * 64), _reseal(b)))
    assert "differs" in _gate_error(combine(honest.sample, folders, tmp_path))
    for f in folders:
        _edit(f, lambda b: (b["key"].update(plan_digest="f" * 64), _reseal(b)))
    assert "another plan" in _gate_error(combine(honest.sample, folders, tmp_path))


def test_a_unit_moved_between_bundles_blocks(three, tmp_path):
    honest, folders = three
    original = (folders[0] / FILENAME).read_bytes()
    bodies = [json.loads((f / FILENAME).read_text()) for f in folders]
    unit = next(u for u in bodies[0]["ran"] if u in bodies[0]["runs"])

    def take(body):
        body["ran"].remove(unit)
        del body["runs"][unit]
        _reseal(body)

    _edit(folders[0], take)
    assert "ran in no shard" in _gate_error(combine(honest.sample, folders, tmp_path))

    def add(body):
        body["ran"].append(unit)
        body["runs"][unit] = bodies[0]["runs"][unit]
        _reseal(body)

    (folders[0] / FILENAME).write_bytes(original)
    _edit(folders[1], add)
    assert "also ran in" in _gate_error(combine(honest.sample, folders, tmp_path))


def test_no_bundle_at_all_blocks(honest, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no shard bundle" in _gate_error(combine(honest.sample, [empty], tmp_path))


def test_the_cli_runs_a_shard_and_combines(honest, tmp_path, capsys):
    from andgate.commands.cli import main

    sample = honest.sample
    common = ["--repo", str(sample.path), "--base", sample.base, "--head", honest.head]
    shard = tmp_path / "two"
    code = main(
        ["check", *common, "--today", SAMPLE_TODAY, "--jobs", "2", "--no-cache",
         "--discrimination-budget", "300", "--shard", "2/2", "--artifacts", str(shard)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "shard 2/2 ran" in out and "andgate combine" in out
    code = main(
        ["combine", str(honest.folders[2][0]), str(shard), "--repo", str(sample.path),
         "--artifacts", str(tmp_path / "out"), "--json"]
    )  # fmt: skip
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and essence(payload) == essence(honest.expected)
    code = main(
        ["combine", str(shard), "--repo", str(sample.path), "--artifacts", str(tmp_path / "o")]
    )
    assert code == 2
    assert "GATE_ERROR" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["0/2", "3/2", "x"])
def test_a_bad_shard_option_is_a_usage_error(text, capsys):
    from andgate.commands.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["check", "--shard", text])
    assert stop.value.code == 2
    assert "--shard" in capsys.readouterr().err
