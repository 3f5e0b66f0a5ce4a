"""andgate's cache folder: remembered facts that only ever make the gate faster.

Nothing read from here can change a verdict. The one use today is the
known-bad killer cache: which oracle item failed under a fixture last time, so
the next replay runs that item first. A wrong or poisoned entry costs a
fallback run of the whole oracle class, never a pass.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

SCHEMA = "andgate.killers/1"


def default_cache_dir() -> Path:
    """$ANDGATE_CACHE_DIR, else $XDG_CACHE_HOME/andgate, else ~/.cache/andgate."""
    explicit = os.environ.get("ANDGATE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "andgate"


def digest(parts: Iterable[str | bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


class KillerCache:
    """Oracle items that failed under a fixture, keyed by the fixture's bytes and
    the oracle files' contents: a change to either forgets the entry."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder / "killers" if folder is not None else None

    def _path(self, patch: bytes, oracle_digest: str) -> Path | None:
        if self.folder is None:
            return None
        return self.folder / f"{digest([patch, oracle_digest])}.json"

    def get(self, patch: bytes, oracle_digest: str) -> tuple[str, ...]:
        path = self._path(patch, oracle_digest)
        try:
            data = json.loads(path.read_text(encoding="utf-8")) if path else {}
        except (OSError, ValueError):
            return ()
        killers = data.get("killers") if isinstance(data, dict) else None
        if data.get("schema") != SCHEMA or not isinstance(killers, list):
            return ()
        return tuple(k for k in killers if isinstance(k, str))[:3]

    def put(self, patch: bytes, oracle_digest: str, killers: Iterable[str]) -> None:
        path = self._path(patch, oracle_digest)
        if path is None:
            return
        payload = json.dumps({"schema": SCHEMA, "killers": sorted(set(killers))[:3]})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(payload, encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs speed
