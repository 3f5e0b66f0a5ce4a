"""What an edit of oracle items gives up, as the approver reads it (summary.md,
report.html, verdict.json `weakened`): found or not, always with the numbers, so that
silence is never mistaken for safety."""

from __future__ import annotations

from typing import Any

from andgate.records import EvidenceFacts

TITLE = "What approving this oracle edit gives up"


def headline(facts: EvidenceFacts) -> str:
    """One sentence: what was found, or that nothing was, with what was tried."""
    edited = _edited(facts)
    if not facts.measured:
        return f"Not measured ({facts.not_measured}): the change {edited}."
    measured = f"{_mutants(facts)}; {_failing(facts)}"
    if facts.error:
        where = f"{measured} ({spent(facts)}). The change {edited}."
        return f"Could not be completed ({facts.error}): {where}"
    found = "Found" if facts.found else "Nothing found"
    return f"{found}: {measured} ({spent(facts)}). The change {edited}."


def _mutants(facts: EvidenceFacts) -> str:
    if not facts.mutants and not facts.error:
        why = "no production function the edited tests name" if not facts.functions else ""
        return f"no mutant ({why or 'no mutation point in the functions they name'})"
    return f"{len(facts.weakened)} of {facts.tried} mutants weakened"


def _failing(facts: EvidenceFacts) -> str:
    if not facts.hidden_known:
        return "base's failing items: not known (its run did not end)"
    if facts.hidden:
        return f"{len(facts.hidden)} of base's failing items hidden"
    return "base's failing items: none"


def spent(facts: EvidenceFacts) -> str:
    """The time taken and what the budget left undone."""
    text = f"{facts.seconds:.1f}s of a {facts.budget:g}s budget"
    if facts.left:
        why = "the budget ran out" if facts.out_of_budget else "their runs did not finish"
        text += f"; {facts.left} more mutants not tried: {why}"
    elif facts.out_of_budget:
        text += "; the budget ran out"
    return text


def _edited(facts: EvidenceFacts) -> str:
    items = len(facts.edited)
    files = len(facts.files)
    what = f"{items} oracle item{'s' if items != 1 else ''}" if items else "oracle items"
    return f"edits or deletes {what} in {files} file{'s' if files != 1 else ''}"


def payload(facts: EvidenceFacts | None) -> dict[str, Any] | None:
    """verdict.json `weakened`; null when the change edits no oracle item."""
    if facts is None:
        return None
    return {
        "measured": facts.measured,
        "not_measured": facts.not_measured or None,
        "complete": facts.complete,
        "error": facts.error or None,
        "edited_items": list(facts.edited),
        "files": list(facts.files),
        "hidden_failures_known": facts.hidden_known,
        "hidden_failures": [
            {"nodeid": h.nodeid, "failure": h.failure, "on_head": h.on_head} for h in facts.hidden
        ],
        "mutants": [
            {
                "path": w.path,
                "line": w.line,
                "function": w.function,
                "mutation": w.mutation,
                "caught_by": list(w.caught_by),
            }
            for w in facts.weakened
        ],
        "functions": list(facts.functions),
        "mutants_made": facts.mutants,
        "mutants_tried": facts.tried,
        "mutants_left": facts.left,
        "budget_seconds": facts.budget,
        "seconds": round(facts.seconds, 1),
        "out_of_budget": facts.out_of_budget,
        "block_weakened_oracles": facts.block,
    }
