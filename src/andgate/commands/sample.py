"""Sample projects as throwaway git repositories.

The demo's project (`samples/minilib/`, package data: a real file tree that ruff
lints like the rest) is a library with human-owned oracle tests, a locked
fixture, two known-bad fixtures generated as real `git diff` output, an accepted
seeded property, a frozen flaky test and one untrusted test. andgate's own
tests build repositories with the same machinery from their own tree
(`tests/resources/`), so editing the demo never changes what the tests exercise.
Repositories get a fixed identity and dates, and git never reads the user's
global config, so commit ids are reproducible.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from andgate.git import Git

OWNER = ("alice", "alice@example.org")
AGENT = ("coding-agent", "agent@example.org")
SAMPLE_TODAY = "2026-11-25"

SAMPLES = Path(__file__).parent / "samples"
# Dotfiles are stored without their dot, so packaging never drops or applies them.
STORED_NAMES = {"_gitignore": ".gitignore"}


def load_tree(folder: Path) -> dict[str, str]:
    """A sample project kept as a real file tree: path relative to `folder` -> text."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        rel = path.relative_to(folder).as_posix()
        files[STORED_NAMES.get(rel, rel)] = path.read_text(encoding="utf-8")
    return files


BASE_FILES: dict[str, str] = load_tree(SAMPLES / "minilib")
INVARIANT = (
    "chunk(seq, n) returns pieces of exactly n items except a shorter last piece, "
    "and joining them gives seq back"
)

# Known-bad fixtures: (path, search, replace) edits of production code, turned
# into real `git diff` output when the repository is built.
KNOWN_BAD: dict[str, tuple[str, str, str]] = {
    "kb_chunk_drops_tail": (
        "minilib/text.py",
        "range(0, len(items), n)]",
        "range(0, len(items) - len(items) % n, n)]",
    ),
    "kb_clamp_ignores_lo": ("minilib/mathx.py", "max(lo, min(x, hi))", "min(x, hi)"),
}


def git_identity_env(
    who: tuple[str, str], date: str = "2026-11-24T10:00:00+00:00"
) -> dict[str, str]:
    name, email = who
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }


@dataclass
class SampleRepo:
    """A git repository under construction, with helpers for writing commits."""

    path: Path

    @property
    def git(self) -> Git:
        return Git(self.path)

    def run(self, *args: str, who: tuple[str, str] = OWNER) -> str:
        return self.git.out(*args, env=git_identity_env(who))

    def write(self, files: Mapping[str, str | bytes]) -> None:
        for rel, content in files.items():
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")

    def edit(self, rel: str, search: str, replace: str) -> None:
        target = self.path / rel
        text = target.read_text(encoding="utf-8")
        if text.count(search) != 1:
            raise ValueError(f"{rel}: {search!r} found {text.count(search)} times, want 1")
        target.write_text(text.replace(search, replace), encoding="utf-8")

    def delete(self, *rels: str) -> None:
        for rel in rels:
            (self.path / rel).unlink()

    def commit(self, message: str, who: tuple[str, str] = OWNER) -> str:
        self.run("add", "-A", who=who)
        self.run("commit", "-q", "--no-verify", "--allow-empty", "-m", message, who=who)
        return self.run("rev-parse", "HEAD")

    def diff_of(self, edits: list[tuple[str, str, str]]) -> str:
        """Apply edits, capture `git diff`, restore the files: a real patch, byte for
        byte (a hunk may end in context lines that are a single space: blank lines)."""
        for rel, search, replace in edits:
            self.edit(rel, search, replace)
        env = git_identity_env(OWNER)
        patch = self.git.run("diff", "--no-color", "--no-ext-diff", env=env).stdout
        self.run("checkout", "--", ".")
        return patch.decode("utf-8")


def lock_text(root: Path) -> str:
    lines = [
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(root).as_posix()}"
        for p in sorted(root.rglob("*"))
        if p.is_file()
    ]
    return "".join(line + "\n" for line in lines)


def init_repo(path: Path) -> SampleRepo:
    path.mkdir(parents=True, exist_ok=True)
    repo = SampleRepo(path)
    repo.run("init", "-q", "-b", "main")
    repo.run("config", "user.name", OWNER[0])
    repo.run("config", "user.email", OWNER[1])
    repo.run("config", "commit.gpgsign", "false")
    return repo


def build_sample(path: Path, files: Mapping[str, str] | None = None) -> tuple[SampleRepo, str]:
    """The sample project as a repository: an upstream commit, then the trust
    overlay as the base commit. Returns the repository and the base sha."""
    repo = init_repo(path)
    files = dict(BASE_FILES if files is None else files)
    repo.write({k: v for k, v in files.items() if k.startswith("minilib/") or k == ".gitignore"})
    repo.commit("minilib upstream")
    patches = {name: repo.diff_of([edit]) for name, edit in KNOWN_BAD.items()}
    repo.write(files)
    repo.write({f"tests/oracles/known_bad/{name}.patch": p for name, p in patches.items()})
    repo.write({"tests/oracles/locks.sha256": lock_text(path / "tests/oracles/fixtures")})
    base = repo.commit("trust overlay (owner: alice)")
    return repo, base
