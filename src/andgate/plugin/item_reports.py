"""What the recorder reads off a test item and its reports: the digest of its
parameter values, the skip and xfail marks that apply here, the seeds it ran
with, a skip's reason and whether it was for a missing module (and which), a
failure's one-line summary, and whether a report is a sub-test's.

PYTEST_DONT_REWRITE. Loaded with the plugin (`hooks.py`) into every pytest
process of the environment: pytest and the standard library only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest


def is_subtest(report: pytest.TestReport) -> bool:
    """A sub-test's report (pytest's `subtests`, unittest `subTest`, pytest-subtests)."""
    return type(report).__name__ in ("SubtestReport", "SubTestReport")


PLAIN = (str, int, float, bool, bytes, type(None))


def _plain(value: Any, depth: int = 0) -> Any:
    """A parameter value as comparable plain data, or raise TypeError: only values
    whose repr is the same in every process can be compared across processes."""
    if depth > 20:
        raise TypeError("nested too deeply")
    if isinstance(value, PLAIN):
        return [type(value).__name__, repr(value)]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_plain(v, depth + 1) for v in value]]
    if isinstance(value, dict):
        return ["dict", sorted((repr(k), _plain(v, depth + 1)) for k, v in value.items())]
    raise TypeError(type(value).__name__)


def params_digest(item: pytest.Item) -> str | None:
    """A digest of the item's parameter values, when they are plain data (else None):
    base's collection and head's oracle run compare them id by id."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    try:
        plain = json.dumps(sorted((k, _plain(v)) for k, v in callspec.params.items()))
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(plain.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def skip_mark(item: pytest.Item) -> str | None:
    """The reason a skip/skipif mark skips this item here, or None. Evaluated
    with pytest's own rules; a condition that cannot be evaluated is no skip."""
    try:
        from _pytest.skipping import evaluate_skip_marks

        skip = evaluate_skip_marks(item)
    except (Exception, pytest.fail.Exception, pytest.skip.Exception):
        return None
    return None if skip is None else str(skip.reason)


def xfail_mark(item: pytest.Item) -> str | None:
    """The reason an xfail mark makes this item xfail here ("" when it gives none),
    or None. Evaluated with pytest's own rules; a condition that cannot be
    evaluated is no xfail (pytest errors the item: it fails anyway)."""
    if item.get_closest_marker("xfail") is None:
        return None
    try:
        from _pytest.skipping import evaluate_xfail_marks

        xfail = evaluate_xfail_marks(item)
    except (Exception, pytest.fail.Exception, pytest.skip.Exception):
        return None
    return None if xfail is None else str(xfail.reason)


def is_missing_module(excinfo: Any) -> bool:
    """Whether an exception is, or was raised while handling or because of, an
    ImportError, or came out of `pytest.importorskip`: a skip for a missing module."""
    return missing_modules(excinfo) is not None


def missing_modules(excinfo: Any) -> tuple[str, ...] | None:
    """The modules a skip for a missing module names, or None when it is none:
    each ImportError's `name` in the exception's chain (the module that could not
    be imported: `dbm.gnu` failing names `_gdbm`), and the name given to
    `pytest.importorskip`; "" for an ImportError that names no module."""
    exc, seen = getattr(excinfo, "value", None), set()
    names: list[str] = []
    found = False
    while isinstance(exc, BaseException) and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ImportError):
            found = True
            names.append(exc.name if isinstance(exc.name, str) else "")
        asked = _importorskip_name(exc.__traceback__)
        if asked is not None:
            found = True
            names.append(asked)
        exc = exc.__cause__ or exc.__context__
    return tuple(dict.fromkeys(names)) if found else None


def _importorskip_name(tb: Any) -> str | None:
    """The module `pytest.importorskip` was asked for, when it raised this."""
    code = getattr(pytest.importorskip, "__code__", None)
    while tb is not None:
        if tb.tb_frame.f_code is code:
            name = tb.tb_frame.f_locals.get("modname")
            return name if isinstance(name, str) else ""
        tb = tb.tb_next
    return None


def skip_reason(report: pytest.TestReport) -> str:
    """pytest's reason for a skip ("requires Python 3.13"), without "Skipped: "."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return str(reason).removeprefix("Skipped: ").strip()[:300]


def seeds_of(item: pytest.Item) -> list[Any]:
    """The seeds this item runs with: a `seed` parameter, or Hypothesis's seed."""
    seeds: list[Any] = []
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "seed" in callspec.params:
        value = callspec.params["seed"]
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            seeds.append(value)
    func = getattr(item, "obj", None)
    if getattr(func, "is_hypothesis_test", False):
        forced = getattr(func, "_hypothesis_internal_use_seed", None)
        chosen = forced if forced is not None else item.config.getoption("hypothesis_seed", None)
        if chosen is not None:
            seeds.append(f"hypothesis:{chosen}")
    return seeds


def failure_summary(report: pytest.TestReport) -> str:
    """pytest's own one-line crash message ("assert 1 == 2", "KeyError: 'x'"),
    or the tail of the report when there is none."""
    crash = getattr(report.longrepr, "reprcrash", None)
    lines = str(getattr(crash, "message", "")).strip().splitlines()
    return lines[0][:300] if lines else tail(report.longreprtext)


def tail(text: str, limit: int = 600) -> str:
    """The last meaningful lines of a failure: enough to read in a summary."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    last = "\n".join(lines[-6:])
    return last[-limit:]
