#!/usr/bin/env python3
"""Issue 4's acceptance, on the acceptance scenarios: a cached, parallel gate
must decide exactly like a cold, serial one.

    compare_verdicts.py COLD.json WARM.json   (run.py --json outputs)

Exit 0 when every scenario has the same verdict, reasons and bits in both runs.
A reason is compared by its code and its detail up to the first ": " (the test
or file and what happened to it): the rest is the test's own failure message,
which may carry a measured value (a timing budget test prints its timing).
"""

from __future__ import annotations

import json
import sys

KEYS = ("verdict", "reasons", "bits")


def comparable(verdict: dict) -> dict:
    reasons = [
        (r.get("code"), str(r.get("detail", "")).split(": ")[0]) for r in verdict.get("reasons", [])
    ]
    return {"verdict": verdict.get("verdict"), "reasons": reasons, "bits": verdict.get("bits")}


def verdicts(path: str) -> dict[str, dict]:
    with open(path, encoding="utf-8") as fh:
        results = json.load(fh)["results"]
    return {r["name"]: comparable((r.get("gate") or {}).get("verdict") or {}) for r in results}


def main(cold_path: str, warm_path: str) -> int:
    cold, warm = verdicts(cold_path), verdicts(warm_path)
    differ = 0
    for name in sorted(set(cold) | set(warm)):
        a, b = cold.get(name, {}), warm.get(name, {})
        keys = [k for k in KEYS if a.get(k) != b.get(k)] if a and b else ["missing"]
        differ += bool(keys)
        print(f"{'SAME' if not keys else 'DIFF'} {name}" + (f": {', '.join(keys)}" if keys else ""))
    print(f"{len(cold) - differ} same, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
