"""One writer for everything andgate writes (issue 28): claimed folders opened once,
one level at a time without following a symlink, files created through the folder's
descriptor. Per command, a committed symlink at each level of the path it writes."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from andgate import writer
from andgate.commands.cli import main
from andgate.commands.sample import SampleRepo

# -- the writer ---------------------------------------------------------------------------


def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.mark.parametrize("level", ["a", "a/b", "a/b/c"])
def test_a_symlink_at_any_level_below_the_anchor_is_refused(tmp_path: Path, level: str) -> None:
    repo = tmp_path / "repo"
    (repo / level).parent.mkdir(parents=True)
    (repo / level).symlink_to(outside(tmp_path), target_is_directory=True)
    with pytest.raises(writer.RefusedPath) as refused:
        writer.Folder.claim(repo / "a/b/c", anchor=repo)
    assert refused.value.at == repo / level
    assert list(outside(tmp_path).iterdir()) == []


def test_symlinks_above_the_anchor_are_the_users_own(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "home").symlink_to(real, target_is_directory=True)
    with writer.Folder.claim(tmp_path / "home/repo/a", anchor=tmp_path / "home/repo") as folder:
        folder.put("x", b"1")
    assert (real / "repo/a/x").read_bytes() == b"1"


def test_a_planted_entry_or_subfolder_link_is_never_written_through(tmp_path: Path) -> None:
    target = outside(tmp_path) / "victim"
    target.write_text("theirs\n")
    with writer.Folder.claim(tmp_path / "mine") as folder:
        (folder.path / "report.md").symlink_to(target)
        folder.put("report.md", b"ours\n")
        (folder.path / "missed").symlink_to(outside(tmp_path), target_is_directory=True)
        with pytest.raises(writer.RefusedPath):
            folder.put("missed/x.patch", b"patch\n")
    assert target.read_text() == "theirs\n"
    assert sorted(p.name for p in outside(tmp_path).iterdir()) == ["victim"]
    assert (tmp_path / "mine/report.md").read_bytes() == b"ours\n"


def test_the_folder_is_the_one_claimed_even_if_its_path_is_swapped_later(tmp_path: Path) -> None:
    with writer.Folder.claim(tmp_path / "claimed") as folder:
        os.rename(tmp_path / "claimed", tmp_path / "moved")
        (tmp_path / "claimed").symlink_to(outside(tmp_path), target_is_directory=True)
        folder.put("x", b"1")
    assert (tmp_path / "moved/x").read_bytes() == b"1"
    assert list(outside(tmp_path).iterdir()) == []


def test_create_new_never_replaces_anything(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(outside(tmp_path) / "new")
    fd = writer.open_folder(tmp_path)
    try:
        assert writer.create_new(fd, "link", b"x") is False
        assert writer.create_new(fd, "fresh", b"x") is True
    finally:
        os.close(fd)
    assert list(outside(tmp_path).iterdir()) == []


# -- each command, with a committed symlink at each level -----------------------------------


def commit_link(sample, link: str, real: tuple[str, ...] = ()) -> Path:  # type: ignore[no-untyped-def]
    """Commit `link` as a symlink to a folder outside the repository (the real
    folders `real` on the way hold a file each, so git keeps them)."""
    target = outside(sample.tmp)

    def apply(repo: SampleRepo) -> None:
        repo.write({f"{folder}/README.md": "ours\n" for folder in real})
        path = repo.path / link
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(os.path.relpath(target, path.parent), target_is_directory=True)

    sample.change(apply)
    return target


def refused(capsys, code: int, target: Path, expected: int = 2) -> str:  # type: ignore[no-untyped-def]
    err = capsys.readouterr().err
    assert code == expected, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert list(target.iterdir()) == [], "written through the symlink"
    return err


PROPOSALS_LEVELS = [("artifacts", ()), ("artifacts/known_bad_proposals", ("artifacts",))]


@pytest.mark.parametrize(("link", "real"), PROPOSALS_LEVELS)
def test_known_bad_harvest_refuses_a_committed_symlink(sample, capsys, link, real) -> None:  # type: ignore[no-untyped-def]
    target = commit_link(sample, link, real)
    code = main(["known-bad", "harvest", "--repo", str(sample.path)])
    assert re.search("symbolic link|through a symlink", refused(capsys, code, target))


@pytest.mark.parametrize(("link", "real"), PROPOSALS_LEVELS)
def test_known_bad_mutants_write_refuses_a_committed_symlink(sample, capsys, link, real) -> None:  # type: ignore[no-untyped-def]
    target = commit_link(sample, link, real)
    code = main(["known-bad", "mutants", "--repo", str(sample.path), "--write", "1"])
    assert re.search("symbolic link|through a symlink", refused(capsys, code, target))


ARTIFACT_LEVELS = [("out", ()), ("out/reports", ("out",)), ("out/reports/gate", ("out/reports",))]


@pytest.mark.parametrize(("link", "real"), ARTIFACT_LEVELS)
def test_check_refuses_a_committed_symlink_on_its_artifacts_path(
    sample, capsys, link, real
) -> None:  # type: ignore[no-untyped-def]
    target = commit_link(sample, link, real)
    artifacts = sample.path / "out/reports/gate"
    argv = ["check", "--repo", str(sample.path), "--base", sample.base, "--head", "HEAD"]
    code = main([*argv, "--artifacts", str(artifacts)])
    assert "symlink" in refused(capsys, code, target)


@pytest.mark.parametrize(("link", "real"), ARTIFACT_LEVELS[:2])
def test_a_shard_refuses_a_committed_symlink_on_its_bundle_path(sample, capsys, link, real) -> None:  # type: ignore[no-untyped-def]
    target = commit_link(sample, link, real)
    artifacts = sample.path / "out/reports/gate"
    argv = ["check", "--repo", str(sample.path), "--base", sample.base, "--shard", "1/2"]
    code = main([*argv, "--artifacts", str(artifacts)])
    assert "symlink" in refused(capsys, code, target)


def linked_copy(sample, folder: str) -> Path:  # type: ignore[no-untyped-def]
    """`folder` committed as a symlink to a copy of itself outside the repository."""
    target = outside(sample.tmp) / "copy"

    def apply(repo: SampleRepo) -> None:
        shutil.copytree(repo.path / folder, target)
        shutil.rmtree(repo.path / folder)
        (repo.path / folder).symlink_to(target, target_is_directory=True)

    sample.change(apply)
    return target


def test_lock_update_refuses_a_committed_symlink_above_the_lock(sample, capsys) -> None:  # type: ignore[no-untyped-def]
    copy = linked_copy(sample, "tests/oracles")
    before = {p.name: p.read_bytes() for p in copy.iterdir() if p.is_file()}
    (copy / "fixtures/cases.json").write_text("{}\n")  # so the lock would change
    code = main(["lock", "update", "--repo", str(sample.path)])
    err = capsys.readouterr().err
    assert code == 2 and "symlink" in err, err
    assert {p.name: p.read_bytes() for p in copy.iterdir() if p.is_file()} == before


def test_lock_update_replaces_a_committed_lock_symlink_never_writing_through(sample) -> None:  # type: ignore[no-untyped-def]
    victim = outside(sample.tmp) / "victim"
    victim.write_text("theirs\n")
    lock = sample.path / "tests/oracles/locks.sha256"

    def apply(repo: SampleRepo) -> None:
        lock.unlink()
        lock.symlink_to(victim)

    sample.change(apply)
    assert main(["lock", "update", "--repo", str(sample.path)]) == 0
    assert victim.read_text() == "theirs\n"
    assert not lock.is_symlink() and "cases.json" in lock.read_text()


FREEZE_ADD = ["freeze", "add", "test_timing", "--reason", "r", "--owner", "o"]


def test_freeze_add_refuses_a_committed_symlink_above_the_freeze_file(sample, capsys) -> None:  # type: ignore[no-untyped-def]
    copy = linked_copy(sample, "tests/flakes")
    before = (copy / "freeze.yaml").read_bytes()
    code = main([*FREEZE_ADD, "--repo", str(sample.path)])
    err = capsys.readouterr().err
    assert code == 2 and "symlink" in err, err
    assert (copy / "freeze.yaml").read_bytes() == before


def test_init_refuses_a_symlinked_folder_it_would_write_into(make_repo, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({"README.md": "x\n"})
    target = outside(tmp_path)
    (repo.path / "tests").symlink_to(target, target_is_directory=True)
    code = main(["init", "--repo", str(repo.path)])
    err = capsys.readouterr().err
    assert code == 2 and "is a symlink" in err, err
    assert list(target.iterdir()) == []


def test_check_refuses_a_link_planted_after_its_path_check(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The path check names the symlink; the descriptor walk is what makes a link
    planted between that check and the open harmless too."""
    from andgate.report import folder as report

    repo = tmp_path / "repo"
    (repo / "out").mkdir(parents=True)
    (repo / "out/reports").symlink_to(outside(tmp_path), target_is_directory=True)
    monkeypatch.setattr(report, "_check_path", lambda *args: None)
    with pytest.raises(report.AndgateError, match="out/reports is a symlink inside"):
        report.claim_artifacts(repo / "out/reports/gate", repo=repo)
    assert list(outside(tmp_path).iterdir()) == []
