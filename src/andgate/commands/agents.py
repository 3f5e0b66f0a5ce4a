"""The block `andgate init --agents FILE` adds to a project's agent instruction file
(AGENTS.md, CLAUDE.md, .github/copilot-instructions.md, ...): never edit oracle tests;
when one contradicts the task, dispute it and stop (docs/disputes.md).

Agents given an explicit way to escalate a contradictory test game it far less often
than agents left to choose between failing and editing the test.
"""

from __future__ import annotations

from pathlib import Path

from andgate.errors import AndgateError

MARKER = "<!-- andgate: oracle disputes -->"
AGENT_BLOCK = """\
{marker}
## Oracle tests (andgate)

This repository is gated by andgate. The oracle tests (the files `{manifest}` names
under `classes.oracle`), their fixtures, the known-bad patches and the lock file are
owned by humans.

- Never edit, skip, delete or weaken an oracle test or its fixtures, and never make
  production code behave differently under test.
- If an oracle test contradicts your task, do not work around it. Run
  `andgate dispute NODEID --reason "which part of the task it contradicts"`, commit
  the disputes file it writes with your change, and stop. The gate blocks the change
  with ORACLE_DISPUTED and shows your reason to the test's owner, who decides.
"""
HINT = (
    "Coding agents: `andgate init --agents AGENTS.md` adds a short block telling them never "
    "to edit oracle tests and to run `andgate dispute` instead (docs/disputes.md)."
)


def agent_block(manifest: str) -> str:
    return AGENT_BLOCK.format(marker=MARKER, manifest=manifest)


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
    text = agent_block(manifest)
    if existing:
        text = existing.rstrip("\n") + "\n\n" + text
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AndgateError(f"{rel}: cannot write it ({exc.strerror or exc}); fix the path") from exc
    verb = "appended to" if existing is not None else "created "
    return f"  {verb} {rel} (the andgate block for coding agents)"
