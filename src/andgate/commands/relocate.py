"""Re-locating a patch's hunks in code that moved: the last way `known-bad refresh` has
to re-derive a stale fixture, after `git apply` and `git apply --3way`.

A known-bad fixture is a small bug put back: a few removed lines and the lines that
replace them. When the code around them changes (a refactor renames a neighbour, adds
a guard, moves the function), the hunk's context no longer matches and `git apply`
refuses it, though the removed lines are still there, once. This module finds them:
each hunk's whole old side if it occurs exactly once, else its changed core (from the
first to the last removed line, the context between included), else, for a hunk that
only adds lines, the context line just before the addition. Anything that is not found
exactly once is refused with why: a guess would make a fixture that tests another bug.
Pure: text in, text out; no git.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

HUNK_HEADER = re.compile(r"^@@ -\d+(?:,(?P<old>\d+))? \+\d+(?:,(?P<new>\d+))? @@")


class CannotRelocate(Exception):
    """A hunk is not where it can be found exactly once (one line: which and why)."""


@dataclass
class Hunk:
    lines: list[str] = field(default_factory=list)  # ' ', '-', '+' prefixed, no newline

    @property
    def old(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "-")]

    @property
    def new(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "+")]

    def core(self) -> tuple[list[str], list[str]]:
        """Old and new side from the first to the last changed line."""
        changed = [i for i, line in enumerate(self.lines) if line[:1] in ("-", "+")]
        inner = Hunk(self.lines[changed[0] : changed[-1] + 1])
        return inner.old, inner.new


@dataclass
class FilePatch:
    path: str
    hunks: list[Hunk] = field(default_factory=list)
    plain: bool = True  # a text edit of an existing file (no add, delete, rename, binary)


def parse_patch(text: str) -> list[FilePatch]:
    """The files and hunks of a `git diff`; lines before the first `diff --git` (a
    commit message) are not the patch's. Each hunk takes as many lines as its header
    counts, so a blank context line an editor stripped to nothing is still context."""
    files: list[FilePatch] = []
    hunk: Hunk | None = None
    left = (0, 0)  # old-side and new-side lines the current hunk still has
    for line in text.split("\n"):
        if hunk is not None and left != (0, 0):
            kind = line[:1] or " "
            if kind == "\\":  # "\ No newline at end of file"
                continue
            hunk.lines.append(kind + line[1:])
            left = (left[0] - (kind != "+"), left[1] - (kind != "-"))
            continue
        header = HUNK_HEADER.match(line)
        if line.startswith("diff --git "):
            files.append(FilePatch(_b_path(line)))
            hunk = None
        elif not files:
            continue
        elif line.startswith(NOT_PLAIN):
            files[-1].plain = False
        elif header is not None:
            hunk = Hunk()
            files[-1].hunks.append(hunk)
            left = (int(header["old"] or 1), int(header["new"] or 1))
    return files


# A file patch that is not a text edit of a file both sides have.
NOT_PLAIN = ("new file", "deleted file", "rename ", "copy ", "Binary files", "GIT binary patch")


def _b_path(header: str) -> str:
    """`diff --git a/x b/x` -> x (paths without spaces; others are refused later)."""
    _, _, rest = header.partition(" b/")
    return rest.strip().strip('"')


def relocate(text: str, hunks: Sequence[Hunk], where: str) -> str:
    """`text` with every hunk applied where its lines occur exactly once."""
    lines = text.split("\n")
    for number, hunk in enumerate(hunks, 1):
        lines = _apply(lines, hunk, f"{where}, hunk {number}")
    return "\n".join(lines)


def _apply(lines: list[str], hunk: Hunk, where: str) -> list[str]:
    old, new = hunk.old, hunk.new
    at = _only(lines, old)
    if at is not None:
        return lines[:at] + new + lines[at + len(old) :]
    core_old, core_new = hunk.core()
    if core_old:
        at = _only(lines, core_old)
        if at is None:
            raise CannotRelocate(_why(lines, core_old, where))
        return lines[:at] + core_new + lines[at + len(core_old) :]
    # Only added lines: anchor them after the context line just before them.
    first = next(i for i, line in enumerate(hunk.lines) if line[:1] == "+")
    before = [line[1:] for line in hunk.lines[:first]]
    if not before:
        raise CannotRelocate(f"{where}: it only adds lines, with no context line to anchor them")
    anchor = before[-1:]
    at = _only(lines, anchor)
    if at is None:
        raise CannotRelocate(_why(lines, anchor, where))
    return lines[: at + 1] + core_new + lines[at + 1 :]


def _only(lines: list[str], block: list[str]) -> int | None:
    """Where `block` starts in `lines`, when it occurs there exactly once."""
    if not block:
        return None
    found = [i for i in range(len(lines) - len(block) + 1) if lines[i : i + len(block)] == block]
    return found[0] if len(found) == 1 else None


def _why(lines: list[str], block: list[str], where: str) -> str:
    count = sum(1 for i in range(len(lines) - len(block) + 1) if lines[i : i + len(block)] == block)
    first = block[0].strip()[:60]
    if count == 0:
        return f"{where}: the lines it changes ({first!r}...) are no longer in the code"
    return f"{where}: the lines it changes ({first!r}...) occur {count} times, so which is unknown"
