"""The one family of user-facing errors.

Every problem a user can cause (bad manifest, unknown ref, shallow clone, ...)
is raised as an `AndgateError` whose message is a single line naming the file or
ref, the field and the fix. The CLI prints that line; `check` turns it into a
block with the matching reason code instead of a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


class AndgateError(Exception):
    """A failure the user can fix; `str(err)` is the one-line message."""


class ManifestError(AndgateError):
    """The trust manifest is missing or not of the schema (MANIFEST_INVALID)."""


class FreezeFileError(AndgateError):
    """The freeze file as a whole cannot be read (every entry is invalid)."""


class GitError(AndgateError):
    """A git command failed; carries the command, exit code and stderr."""

    def __init__(
        self, message: str, *, cmd: tuple[str, ...] = (), code: int | None = None, stderr: str = ""
    ) -> None:
        super().__init__(message)
        self.cmd = cmd
        self.code = code
        self.stderr = stderr


class GitNotFound(GitError):
    """git is not installed or not on PATH."""


class GateTimeout(AndgateError):
    """A pytest process or git command ran past its time limit."""


class Interrupted(AndgateError):
    """SIGINT or SIGTERM arrived; cleanup runs, then the check blocks."""


class BadInput(AndgateError):
    """A command refused its input (`freeze add` with an id that matches nothing)."""


class FreezeEditError(AndgateError):
    """The freeze file has a layout the editor does not rewrite."""


def guarded(run: Callable[[], int], could_not_run: int) -> int:
    """The one handler: run a command; a user error is one line on stderr and
    the command's could-not-run exit code, never a traceback."""
    try:
        return int(run())
    except AndgateError as exc:
        print(f"andgate: {exc}", file=sys.stderr)
        return could_not_run


class BundleError(AndgateError):
    """The shard bundles given to `combine` are missing, duplicated, edited or
    disagree (a GATE_ERROR: the verdict cannot be formed from them)."""
