"""Keep test code out of the gate's process and from gaining privileges.

PYTEST_DONT_REWRITE. Standard library only: the plugin calls `no_new_privs` in
every pytest process the gate starts (the bootstrap and the fork server's children
alike, before any repository code runs).

- The gate makes itself non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): a process of the
  same user can then neither attach to it (ptrace) nor read its memory or environment
  through /proc (`/proc/<pid>/mem`, `environ`, `maps` become root's). A test process
  must not read the gate's secrets or rewrite the facts it holds.
- Each test process sets `no_new_privs` (`prctl(PR_SET_NO_NEW_PRIVS, 1)`): nothing it
  executes gains privileges from a setuid or setcap binary (`sudo` to edit
  `/etc/hosts`), and the flag holds for all its descendants.

Linux only; elsewhere (and where the kernel refuses) both are no-ops that say so by
returning False. Neither helps against a gate run as root: see docs/threat-model.md.
"""

from __future__ import annotations

import ctypes  # here, not in a function: imported with the plugin, before the worktree
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39


def _prctl(option: int, value: int = 0) -> int | None:
    """prctl's answer, or None where there is no prctl to ask."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0))
    except (OSError, AttributeError, TypeError):
        return None


def make_undumpable() -> bool:
    """This process can no longer be traced or read by others of its user."""
    return _prctl(PR_SET_DUMPABLE, 0) == 0


def make_dumpable() -> bool:
    """Undo `make_undumpable` (a fork server's child becomes what Popen would start)."""
    return _prctl(PR_SET_DUMPABLE, 1) == 0


def is_dumpable() -> bool | None:
    answer = _prctl(PR_GET_DUMPABLE)
    return None if answer is None or answer < 0 else bool(answer)


def no_new_privs() -> bool:
    """Neither this process nor its descendants can gain privileges on exec."""
    return _prctl(PR_SET_NO_NEW_PRIVS, 1) == 0


def has_no_new_privs() -> bool | None:
    answer = _prctl(PR_GET_NO_NEW_PRIVS)
    return None if answer is None or answer < 0 else bool(answer)
