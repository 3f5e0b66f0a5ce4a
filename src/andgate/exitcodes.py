"""Every exit code a command returns, by name (contract section 3).

`Exit` is the one scale of every command but `classify`:

- `OK` (0): allow (`check`, `combine`); the lock matches or was written; every known-bad
  fixture bit; nothing the next check would trip on; done (`freeze`, `init`, `dispute`,
  `known-bad`, a `check --shard` part that ran); every demo verdict as expected.
- `BLOCK` (1): the command's answer is no: block; lock mismatch; a fixture stayed green or
  did not apply; something would trip the next check (`doctor`); a dispute refused; a demo
  verdict differs.
- `COULD_NOT_RUN` (2): bad input or the gate broke, said in one line on stderr (for
  `check`: `MANIFEST_INVALID` or `GATE_ERROR` among the reasons, also a block). Never the
  same code as `BLOCK`: "the gate said no" and "the gate could not answer" differ.
- `NO_FIXTURES` (3): `replay-known-bad` found no fixture under `known_bad_dir`.
- `INTERRUPTED` (130): Ctrl-C, every command (128 + SIGINT, as a shell reports it).

`ClassifyExit`, beside it, is `classify`'s own scale, which the contract fixed before
`Exit` existed: `OK` (0), `EXPIRED_FREEZE` (2), `NO_ORACLE` (3), `INVALID` (4: the
manifest or freeze file), `COULD_NOT_RUN` (5: the user error `Exit.COULD_NOT_RUN` is
for the other commands). Each command's `--help` and docs/commands.md say which codes
it uses. No code has two names: both enums are `enum.unique`.
"""

from __future__ import annotations

import enum


@enum.unique
class Exit(enum.IntEnum):
    OK = 0
    BLOCK = 1
    COULD_NOT_RUN = 2
    NO_FIXTURES = 3
    INTERRUPTED = 130


@enum.unique
class ClassifyExit(enum.IntEnum):
    """`andgate classify`, most severe first when several apply: 4, 3, 2, 0."""

    OK = 0
    EXPIRED_FREEZE = 2
    NO_ORACLE = 3
    INVALID = 4  # invalid manifest or freeze file
    COULD_NOT_RUN = 5  # not a repository, no HEAD, the tests could not be collected
