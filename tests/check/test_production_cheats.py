"""Production-side cheats end to end: the scan runs on base..head before any test,
and an oracle's parameters are pinned by base. Each change carries a real bug or a
cheat; `test_scan.py` has one unit test per construct and near-miss."""

from __future__ import annotations

import pytest

from andgate.commands.sample import SampleRepo
from harness import BASE_FILES
from stories import honest_fix

pytestmark = pytest.mark.slow

HARNESS_CHEAT = (
    "def clamp(x, lo, hi):\n",
    "import sys\n\n\ndef clamp(x, lo, hi):\n"
    "    if 'pytest' not in sys.modules:\n        return x\n",
)


def _cheat(repo: SampleRepo) -> None:
    repo.edit("minilib/mathx.py", *HARNESS_CHEAT)


def test_code_that_detects_the_harness_is_production_suspicious(sample):
    run = sample.gate(sample.change(_cheat))
    assert run.decision == "block"
    details = run.details("PRODUCTION_SUSPICIOUS")
    assert any(d.startswith("minilib/mathx.py:") and "harness_reference" in d for d in details)


# An owner's approval lifting it: tests/leaves/test_verdict.py; the allow-list read
# from base: tests/check/test_gate_before_tests.py (neither needs a pytest process).


IMPLICIT = {
    "statistics.py": ("def mean(xs):\n    return 3\n", "shadowing_module"),
    "__init__.py": ("", "implicit_import"),
    "sitecustomize.py": ("import os\n", "implicit_import"),
    "minilib/__pycache__/mathx.cpython-311.pyc": (b"\xa7\r\r\n\x00\x00", "binary_file"),
}
SPECIAL_CASE = (
    '    """Lower-case words joined by single dashes."""\n',
    '    """Lower-case words joined by single dashes."""\n'
    '    if text == "Hello World":\n        return "hello-world"\n',
)


def test_implicit_imports_gitattributes_and_hard_coded_answers_are_found(sample):
    """One change, each construct in its own file: files Python or pytest import
    implicitly (PRODUCTION_SUSPICIOUS, each named), `.gitattributes` (trust root)
    and slugify special-casing an oracle's input (PRODUCTION_SUSPICIOUS, a
    hard-coded answer; the expected "hello-world", one name, an ORACLE_LITERAL
    warning)."""

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.edit("minilib/text.py", *SPECIAL_CASE)
        repo.write({path: content for path, (content, _) in IMPLICIT.items()})
        repo.write({".gitattributes": "tests/** filter=agent\n"})
        repo.run("add", "-f", "-A")

    run = sample.gate(sample.change(change))
    suspicious = run.details("PRODUCTION_SUSPICIOUS")
    for path, (_, construct) in IMPLICIT.items():
        assert any(d.startswith(path) and construct in d for d in suspicious), (path, suspicious)
    assert any("bytecode (.pyc)" in d for d in suspicious), suspicious  # by name, not content
    assert any(d.startswith("minilib/text.py:16") and "hard_coded_answer" in d for d in suspicious)
    assert any(d.startswith(".gitattributes changed") for d in run.details("TRUST_ROOT_CHANGED"))
    warnings = [w["detail"] for w in run.payload["warnings"] if w["code"] == "ORACLE_LITERAL"]
    assert any("minilib/text.py" in w for w in warnings), run.payload["warnings"]


PARAM_ORACLE = """\
import pytest

from minilib import mathx


@pytest.mark.parametrize("x, lo, hi, want", mathx.EXAMPLES, ids=["low", "high"])
def test_clamp_examples(x, lo, hi, want):
    assert mathx.clamp(x, lo, hi) == want
"""


def test_oracle_parameters_from_production_are_pinned_by_base(tmp_path):
    from conftest import Sample
    from harness import build_test_sample

    mathx = BASE_FILES["minilib/mathx.py"] + "\n\nEXAMPLES = [(-5, 0, 10, 0), (50, 0, 10, 10)]\n"
    files = {
        **BASE_FILES,
        "minilib/mathx.py": mathx,
        "tests/oracles/test_param_oracle.py": PARAM_ORACLE,
    }
    repo, base = build_test_sample(tmp_path / "s", files)
    sample = Sample(repo, base, tmp_path)

    def trivial(repo: SampleRepo) -> None:
        repo.edit("minilib/mathx.py", "max(lo, min(x, hi))", "min(x, hi)")
        repo.edit(
            "minilib/mathx.py",
            "EXAMPLES = [(-5, 0, 10, 0), (50, 0, 10, 10)]",
            "EXAMPLES = [(5, 0, 10, 5), (6, 0, 10, 6)]",
        )

    run = sample.gate(sample.change(trivial))
    failed = run.details("ORACLE_FAILED")
    assert any("test_clamp_examples[low] failed: parameters changed" in d for d in failed), failed
    warned = [w["code"] for w in run.payload["warnings"]]
    assert "ORACLE_FROM_PRODUCTION" in warned
