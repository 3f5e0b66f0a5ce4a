"""Facts for the verdict's pure tests: CLEAN is a change every phase passes.

Shared by `leaves/test_verdict.py` and the check stage's tests that hand `decide`
one phase's facts on top of a clean change (`check/test_skips.py`,
`check/test_gate_before_tests.py`).
"""

from __future__ import annotations

from andgate.records import (
    ChangeFacts,
    ClassFacts,
    Facts,
    FreezeFacts,
    ItemResult,
    KnownBadFacts,
    LockFacts,
    OracleFacts,
    Outcome,
    PropertyFacts,
    ReplayFacts,
)

PASSED_ORACLE = ItemResult("tests/oracles/test_o.py::test_o", Outcome.PASSED)
SEEDED = PropertyFacts(
    results=(ItemResult("tests/p.py::test_p", Outcome.PASSED),),
    files={"tests/p.py": ("tests/p.py::test_p",)},
    seeds={"tests/p.py::test_p": (1,)},
)
BITES = ReplayFacts("kb.patch", applied=True, failed=(PASSED_ORACLE.nodeid,))
CLEAN = Facts(
    changes=ChangeFacts(),
    lock=LockFacts(),
    oracle=OracleFacts(results=(PASSED_ORACLE,)),
    known_bad=KnownBadFacts(replays=(BITES,)),
    property=SEEDED,
    freezes=FreezeFacts(),
    untrusted=ClassFacts(),
)
