"""`andgate check`'s approval evidence options reach the check as CheckOptions."""

from __future__ import annotations

import pytest

from andgate.check.options import DEFAULT_EVIDENCE_BUDGET, CheckOptions
from andgate.commands import cli


class Seen(BaseException):
    """Raised by the fake check with the options it was given."""


def options_of(monkeypatch: pytest.MonkeyPatch, *args: str) -> CheckOptions:
    def fake(opts: CheckOptions) -> None:
        raise Seen(opts)

    monkeypatch.setattr("andgate.check.pipeline.run_check", fake)
    with pytest.raises(Seen) as seen:
        cli.main(["check", "--base", "HEAD~1", *args])
    return seen.value.args[0]  # type: ignore[no-any-return]


def test_the_evidence_is_on_by_default_with_the_documented_budget(monkeypatch):
    opts = options_of(monkeypatch)
    assert opts.evidence is True and opts.evidence_budget is None
    assert DEFAULT_EVIDENCE_BUDGET == 60.0


def test_no_evidence_and_a_budget(monkeypatch):
    opts = options_of(monkeypatch, "--no-evidence", "--evidence-budget", "12.5")
    assert opts.evidence is False and opts.evidence_budget == 12.5


def test_a_budget_must_be_positive(capsys):
    with pytest.raises(SystemExit) as ended:
        cli.main(["check", "--evidence-budget", "0"])
    assert ended.value.code == 2
    assert "--evidence-budget" in capsys.readouterr().err


def test_shards_and_combine_agree_on_the_evidence_options():
    opts = CheckOptions(evidence=False, evidence_budget=5.0).bundle_options()
    assert (opts["evidence"], opts["evidence_budget"]) == (False, 5.0)
