"""The block `andgate init --agents FILE` adds to a project's agent instruction file
(AGENTS.md, CLAUDE.md, .github/copilot-instructions.md, ...): never edit oracle tests;
when one contradicts the task, dispute it and stop (docs/disputes.md).

Agents given an explicit way to escalate a contradictory test game it far less often
than agents left to choose between failing and editing the test.
"""

from __future__ import annotations

from pathlib import Path

from andgate.errors import AndgateError
from andgate.trust.adoption import AGENTS_MARKER as MARKER
from andgate.trust.adoption import with_agent_block

HINT = (
    "Coding agents: `andgate init --agents AGENTS.md` adds a short block telling them never "
    "to edit oracle tests and to run `andgate dispute` instead (docs/disputes.md)."
)


def add_agent_block(root: Path, rel: str, manifest: str) -> str:
    """Append the block to `rel` (created when missing); one line saying what happened.
    A file that already holds it is left alone; nothing is written through a symlink."""
    target = root / rel
    for parent in [target, *target.parents]:
        if parent == root:
            break
        if parent.is_symlink():
            raise AndgateError(
                f"{rel}: {parent} is a symbolic link; andgate never writes through one"
            )
    try:
        existing = target.read_text(encoding="utf-8") if target.exists() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise AndgateError(f"{rel}: cannot read it ({exc}); fix it or name another file") from None
    if existing is not None and MARKER in existing:
        return f"  kept     {rel} (it already holds the andgate block)"
    # The very bytes `check` recognises while adopting (`adoption.agent_block_files`).
    text = with_agent_block(existing, manifest)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AndgateError(f"{rel}: cannot write it ({exc.strerror or exc}); fix the path") from exc
    verb = "appended to" if existing is not None else "created "
    return f"  {verb} {rel} (the andgate block for coding agents)"
