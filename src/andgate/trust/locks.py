"""The fixture lock: sha256 of every file under `fixtures_dir`, as `sha256sum` writes it.

One line per file, `<64 hex>  <path relative to fixtures_dir>`; blank lines
and `#` comments are ignored. Written sorted, so `lock update` is deterministic
and `sha256sum -c` can check the same file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from andgate.git import Git
from andgate.records import LockFacts
from andgate.trust.manifest import Manifest
from andgate.trust.paths import is_under

LINE = re.compile(r"^(?P<sha>[0-9a-fA-F]{64}) [ *](?P<path>.+)$")


@dataclass(frozen=True)
class Lock:
    entries: Mapping[str, str]
    problems: tuple[str, ...] = ()
    exists: bool = True


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_lock(text: bytes | None, source: str) -> Lock:
    """Parse a lock file; a malformed line is a problem, never silently skipped."""
    if text is None:
        missing = f"{source}: lock file is missing; create it with `andgate lock update`"
        return Lock({}, (missing,), exists=False)
    entries: dict[str, str] = {}
    problems = []
    # Paths are bytes, as `sha256sum` writes them: surrogateescape matches the
    # way git paths are decoded, so a non-UTF-8 file name can be locked too.
    # Split on \n only: a file name may hold any other control character.
    lines = text.decode("utf-8", "surrogateescape").split("\n")
    for number, line in enumerate(lines, 1):
        line = line.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = LINE.match(line)
        if match is None:
            problems.append(
                f"{source}:{number}: expected '<sha256>  <path>', got {line[:60]!r}; "
                "regenerate it with `andgate lock update`"
            )
        elif match["path"] in entries:
            problems.append(
                f"{source}:{number}: {match['path']} is listed twice; "
                "regenerate it with `andgate lock update`"
            )
        else:
            entries[match["path"]] = match["sha"].lower()
    return Lock(entries, tuple(problems))


def format_lock(digests: Mapping[str, str]) -> str:
    return "".join(f"{digests[path]}  {path}\n" for path in sorted(digests))


def compare(lock: Lock, actual: Mapping[str, str], fixtures_dir: str) -> LockFacts:
    """Actual digests (path relative to fixtures_dir -> sha256) against the lock."""
    if not lock.exists and not actual:
        return LockFacts()  # no fixtures and no lock: nothing to pin
    prefix = fixtures_dir.rstrip("/") + "/"
    return LockFacts(
        missing=tuple(prefix + p for p in sorted(set(lock.entries) - set(actual))),
        extra=tuple(prefix + p for p in sorted(set(actual) - set(lock.entries))),
        changed=tuple(
            prefix + p
            for p in sorted(set(lock.entries) & set(actual))
            if lock.entries[p] != actual[p]
        ),
        problems=lock.problems,
    )


def lock_facts(git: Git, base: str, head: str, manifest: Manifest, *, approved: bool) -> LockFacts:
    """Head's fixture bytes against base's lock (head's own lock when an owner approved)."""
    lock_commit = head if approved else base
    lock = parse_lock(
        git.read_blob(lock_commit, manifest.lock_file),
        f"{manifest.lock_file} (at {lock_commit[:12]})",
    )
    entries = [
        e
        for e in git.ls_tree(head, [manifest.fixtures_dir])
        if e.kind == "blob" and is_under(e.path, manifest.fixtures_dir)
    ]
    blobs = git.read_blobs(e.sha for e in entries)
    prefix = manifest.fixtures_dir.rstrip("/") + "/"
    actual = {e.path[len(prefix) :]: sha256(blobs[e.sha]) for e in entries}
    return compare(lock, actual, manifest.fixtures_dir)
