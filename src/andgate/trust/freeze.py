"""The freeze file: quarantined flaky tests, each with an owner and an expiry.

A freeze that cannot be validated freezes nothing (its test stays untrusted)
and is reported as FREEZE_INVALID; an expired one is FREEZE_EXPIRED. Both block.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from andgate.errors import FreezeFileError
from andgate.records import FreezeFacts
from andgate.trust.manifest import load_yaml

FIELDS = ("id", "reason", "first_seen", "expires", "owner")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Freeze:
    id: str
    reason: str
    first_seen: dt.date
    expires: dt.date
    owner: str

    def is_expired(self, today: dt.date) -> bool:
        """Expired on the day of `expires`: a freeze never outlives its date."""
        return self.expires <= today

    def days_left(self, today: dt.date) -> int:
        return (self.expires - today).days

    def expired_message(self) -> str:
        """The one FREEZE_EXPIRED text, for `check` and `classify` alike."""
        return (
            f"{self.id!r} expired on {self.expires.isoformat()} (owner {self.owner}); fix the "
            "test, or renew the freeze with an owner's approval (andgate freeze prune, then "
            "freeze add)"
        )


@dataclass(frozen=True)
class FreezeProblem:
    """An entry (or the whole file, index None) that freezes nothing."""

    index: int | None
    id: str | None
    message: str


@dataclass(frozen=True)
class FreezeSet:
    source: str
    valid: tuple[Freeze, ...] = ()
    invalid: tuple[FreezeProblem, ...] = ()

    def live(self, today: dt.date) -> tuple[Freeze, ...]:
        return tuple(f for f in self.valid if not f.is_expired(today))

    def expired(self, today: dt.date) -> tuple[Freeze, ...]:
        return tuple(f for f in self.valid if f.is_expired(today))


def parse_date(value: Any) -> dt.date | None:
    """YYYY-MM-DD, quoted (a string) or not (YAML makes it a date)."""
    if isinstance(value, dt.datetime):
        return None
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and DATE_RE.match(value.strip()):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def parse_freezes(text: bytes | str | None, source: str, max_days: int) -> FreezeSet:
    """Validate the freeze file. A missing file means no freezes."""
    if text is None:
        return FreezeSet(source)
    try:
        data = load_yaml(text, source, FreezeFileError)
        entries = _entries(data, source)
    except FreezeFileError as exc:
        return FreezeSet(source, invalid=(FreezeProblem(None, None, str(exc)),))
    ids = Counter(_id_of(e) for e in entries)
    valid: list[Freeze] = []
    invalid: list[FreezeProblem] = []
    for index, entry in enumerate(entries):
        result = _validate_entry(entry, index, source, max_days, ids)
        if isinstance(result, Freeze):
            valid.append(result)
        else:
            invalid.append(result)
    return FreezeSet(source, tuple(valid), tuple(invalid))


def _entries(data: Any, source: str) -> list[Any]:
    if data is None:
        return []
    if not isinstance(data, Mapping):
        raise FreezeFileError(f"{source}: must be a mapping with a 'freezes' list")
    unknown = [k for k in data if k != "freezes"]
    if unknown:
        raise FreezeFileError(f"{source}: unknown key {unknown[0]!r}; only 'freezes' is allowed")
    entries = data.get("freezes")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise FreezeFileError(f"{source}: 'freezes' must be a list of entries")
    return entries


def _id_of(entry: Any) -> str | None:
    """The id as it is matched (stripped); None for anything but a string."""
    ident = entry.get("id") if isinstance(entry, Mapping) else None
    return ident.strip() if isinstance(ident, str) else None


def _shown(value: Any) -> str:
    """A field value as the user wrote it: `2026-12-01 10:00:00`, not `datetime(...)`."""
    return repr(value.isoformat(" ")) if isinstance(value, dt.datetime) else repr(value)


def _validate_entry(
    entry: Any, index: int, source: str, max_days: int, ids: Counter[str | None]
) -> Freeze | FreezeProblem:
    where = f"{source}: freezes[{index}]"
    if not isinstance(entry, Mapping):
        return FreezeProblem(index, None, f"{where} must be a mapping with {', '.join(FIELDS)}")
    ident = entry.get("id")
    ident = ident if isinstance(ident, str) else None

    def bad(message: str) -> FreezeProblem:
        label = f" (id {ident!r})" if ident else ""
        return FreezeProblem(index, ident, f"{where}{label}: {message}")

    unknown = [k for k in entry if k not in FIELDS]
    if unknown:
        return bad(f"unknown key {unknown[0]!r}; allowed keys: {', '.join(FIELDS)}")
    for field in ("id", "reason", "owner"):
        value = entry.get(field)
        if not isinstance(value, str) or not value.strip():
            return bad(f"{field} is missing or empty; add a non-empty string")
    if ids[entry["id"].strip()] > 1:
        return bad("duplicate id; each test may be frozen by one entry only")
    first_seen, expires = parse_date(entry.get("first_seen")), parse_date(entry.get("expires"))
    for field, value in (("first_seen", first_seen), ("expires", expires)):
        if field not in entry:
            return bad(f"{field} is missing; add it as YYYY-MM-DD")
        if value is None:
            return bad(f"{field} {_shown(entry.get(field))} is not a date; write it as YYYY-MM-DD")
    assert first_seen is not None and expires is not None
    span = (expires - first_seen).days
    if span < 0:
        return bad("expires is before first_seen; fix the dates")
    if span > max_days:
        return bad(
            f"freeze lasts {span} days, over max_freeze_days ({max_days}); "
            "shorten it or fix the test"
        )
    return Freeze(entry["id"].strip(), entry["reason"], first_seen, expires, entry["owner"])


def freeze_facts(freezes: FreezeSet, today: dt.date, ineffective: Iterable[str]) -> FreezeFacts:
    """The freeze phase's facts: expired and invalid entries (both block) and the
    live ones that freeze nothing (a warning)."""
    return FreezeFacts(
        expired=tuple(f.expired_message() for f in freezes.expired(today)),
        invalid=tuple(p.message for p in freezes.invalid),
        ineffective=tuple(ineffective),
    )
