"""The only module that runs git.

Every call goes through `Git.run`: no shell, a timeout, inherited `GIT_*`
variables stripped (a `GIT_DIR` exported by a hook would point every call at the
wrong repository), hooks disabled, and failures raised as `GitError` naming the
command, its exit code and stderr.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from andgate.errors import GateTimeout, GitError, GitNotFound

DEFAULT_TIMEOUT = 120.0
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Fixed identity and dates so the synthetic trees andgate commits are
# reproducible and never depend on the user's git config.
SYNTHETIC_IDENTITY = {
    "GIT_AUTHOR_NAME": "andgate",
    "GIT_AUTHOR_EMAIL": "andgate@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_NAME": "andgate",
    "GIT_COMMITTER_EMAIL": "andgate@localhost",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
}


def decode_path(raw: bytes) -> str:
    """git paths are bytes; surrogateescape keeps non-UTF-8 names round-trippable."""
    return raw.decode("utf-8", "surrogateescape")


def encode_path(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """os.environ without GIT_* variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str
    sha: str
    path: str


@dataclass(frozen=True)
class Change:
    """One line of `git diff --raw`: a path added, modified, deleted, renamed or re-moded."""

    status: str
    old_path: str | None
    new_path: str | None
    old_mode: str
    new_mode: str

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p for p in (self.old_path, self.new_path) if p is not None)


class Git:
    """git commands against one repository."""

    def __init__(self, repo: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.repo = Path(repo)
        self.timeout = timeout
        self._trees: dict[str, tuple[TreeEntry, ...]] = {}

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        exe = shutil.which("git")
        if exe is None:
            raise GitNotFound("git is not installed or not on PATH: install git and retry")
        cmd = (exe, "-c", "core.hooksPath=/dev/null", "-c", "core.quotepath=false", *args)
        limit = self.timeout if timeout is None else timeout
        try:
            proc = subprocess.run(
                cmd,
                cwd=cwd or self.repo,
                input=input,
                env=clean_env(env),
                capture_output=True,
                timeout=limit,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise GateTimeout(f"git {' '.join(args[:3])} ran past {limit:.0f}s") from exc
        except (FileNotFoundError, NotADirectoryError) as exc:
            # The executable was found above, so the missing path is the folder.
            raise GitError(f"{cwd or self.repo}: no such directory") from exc
        if check and proc.returncode != 0:
            stderr = proc.stderr.decode("utf-8", "replace").strip()
            first = stderr.splitlines()[0] if stderr else "no output"
            raise GitError(
                f"git {' '.join(args[:4])} failed (exit {proc.returncode}): {first}",
                cmd=tuple(cmd),
                code=proc.returncode,
                stderr=stderr,
            )
        return proc

    def out(self, *args: str, **kwargs: object) -> str:
        return self.run(*args, **kwargs).stdout.decode("utf-8", "surrogateescape").strip()  # type: ignore[arg-type]

    # -- refs -----------------------------------------------------------------

    def toplevel(self) -> Path:
        if not self.repo.is_dir():
            raise GitError(f"{self.repo}: no such directory; pass --repo DIR naming a git checkout")
        try:
            return Path(self.out("rev-parse", "--show-toplevel"))
        except GitNotFound:
            raise
        except GitError as exc:
            raise GitError(
                f"{self.repo}: not a git repository (run andgate inside a git checkout, "
                "or pass --repo DIR)",
                cmd=exc.cmd,
                code=exc.code,
                stderr=exc.stderr,
            ) from exc

    def is_shallow(self) -> bool:
        return self.out("rev-parse", "--is-shallow-repository") == "true"

    def resolve(self, ref: str, *, what: str) -> str:
        """The commit sha of `ref`, or an error that says how to get it."""
        proc = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        if proc.returncode == 0:
            return proc.stdout.decode().strip()
        if self.is_shallow():
            raise GitError(
                f"{what} {ref!r} is not in this shallow clone: fetch full history "
                "(git fetch --unshallow, or actions/checkout with fetch-depth: 0)"
            )
        raise GitError(
            f"{what} {ref!r} is not a commit in {self.repo}: check the ref name or fetch it"
        )

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self.run("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def default_upstream(self) -> str | None:
        """The upstream default branch (origin/HEAD, else origin/main or origin/master)."""
        proc = self.run("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False)
        candidates = [proc.stdout.decode().strip()] if proc.returncode == 0 else []
        candidates += ["refs/remotes/origin/main", "refs/remotes/origin/master"]
        for ref in candidates:
            if (
                ref
                and self.run("rev-parse", "--verify", "--quiet", ref, check=False).returncode == 0
            ):
                return ref
        return None

    # -- trees and blobs --------------------------------------------------------

    def ls_tree(self, commit: str, paths: Iterable[str] = ()) -> list[TreeEntry]:
        """Every blob (and submodule) under `paths` at `commit`, or under its root.

        A whole tree named by its commit's sha never changes, and a check lists
        base's several times (its test side, the change, the plan): those are
        listed once per `Git`."""
        paths = list(paths)
        whole = not paths and FULL_SHA.fullmatch(commit) is not None
        if whole and commit in self._trees:
            return list(self._trees[commit])
        entries = self._ls_tree(commit, paths)
        if whole:
            self._trees[commit] = tuple(entries)
        return entries

    def _ls_tree(self, commit: str, paths: list[str]) -> list[TreeEntry]:
        args = ["ls-tree", "-r", "-z", "--full-tree", commit]
        if paths:
            args += ["--", *paths]
        raw = self.run(*args).stdout
        entries = []
        for record in raw.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, kind, sha = meta.decode().split(" ")
            entries.append(TreeEntry(mode, kind, sha, decode_path(path)))
        return entries

    def read_blob(self, commit: str, path: str) -> bytes | None:
        """The bytes of `path` at `commit`, or None when the path is absent."""
        spec = encode_path(f"{commit}:{path}")
        proc = self.run("cat-file", "--batch", input=spec + b"\n")
        header, _, rest = proc.stdout.partition(b"\n")
        if header.endswith(b" missing") or b" blob " not in header:
            return None
        size = int(header.split(b" ")[2])
        return rest[:size]

    def blob_sizes(self, shas: Iterable[str]) -> dict[str, int]:
        """Byte sizes of many blobs in one `git cat-file --batch-check` call."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        out = self.run("cat-file", "--batch-check", input=("\n".join(wanted) + "\n").encode())
        sizes = {}
        for line in out.stdout.decode("ascii", "replace").splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                sizes[parts[0]] = int(parts[2])
        return sizes

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Many blobs in one `git cat-file --batch` call."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        proc = self.run("cat-file", "--batch", input=("\n".join(wanted) + "\n").encode())
        data, out, pos = proc.stdout, {}, 0
        for sha in wanted:
            end = data.index(b"\n", pos)
            header = data[pos:end].split(b" ")
            pos = end + 1
            if len(header) < 3:
                continue
            size = int(header[2])
            out[sha] = data[pos : pos + size]
            pos += size + 1
        return out

    def diff_raw(self, base: str, head: str) -> list[Change]:
        raw = self.run("diff", "--raw", "-z", "-M", "--no-ext-diff", base, head).stdout
        return parse_raw_diff(raw)

    def dirty_paths(self) -> list[str]:
        # Without --no-optional-locks, status rewrites the user's index whenever
        # it refreshes stale stat data: the index must stay byte-identical.
        raw = self.run("--no-optional-locks", "status", "--porcelain", "-z").stdout
        return [decode_path(r[3:]) for r in raw.split(b"\0") if len(r) > 3]

    # -- synthetic commits --------------------------------------------------------

    def commit_overlay(
        self, start: str, replace: Mapping[str, TreeEntry | None], index_file: Path, message: str
    ) -> str:
        """A commit whose tree is `start` with `replace` applied (None removes a path).

        Built in a private index file, so the user's index is never touched; the
        commit is reachable from no ref and git's gc collects it later.
        """
        if not replace:
            return start
        env = {"GIT_INDEX_FILE": str(index_file), **SYNTHETIC_IDENTITY}
        self.run("read-tree", start, env=env)
        lines = []
        for path, entry in sorted(replace.items()):
            if entry is None:
                lines.append(b"0 " + b"0" * 40 + b"\t" + encode_path(path))
            else:
                lines.append(f"{entry.mode} {entry.sha}".encode() + b"\t" + encode_path(path))
        self.run("update-index", "-z", "--index-info", input=b"\0".join(lines) + b"\0", env=env)
        tree = self.out("write-tree", env=env)
        return self.out("commit-tree", tree, "-p", start, "-m", message, env=env)


def parse_raw_diff(raw: bytes) -> list[Change]:
    """Parse `git diff --raw -z` output (renames carry two paths)."""
    fields = raw.split(b"\0")
    changes, i = [], 0
    while i < len(fields) and fields[i]:
        meta = fields[i].decode().lstrip(":").split(" ")
        old_mode, new_mode, status = meta[0], meta[1], meta[4]
        if status[0] in "RC":
            old, new = decode_path(fields[i + 1]), decode_path(fields[i + 2])
            i += 3
        else:
            path = decode_path(fields[i + 1])
            old = None if status == "A" else path
            new = None if status == "D" else path
            i += 2
        changes.append(Change(status[0], old, new, old_mode, new_mode))
    return changes
