"""Every command's exit codes, by name (contract section 3).

"The gate said block" and "the gate could not run" are different codes for
every command, and no code means two things within one command. A user error
(`AndgateError`) ends every command with its `COULD_NOT_RUN` code, through the
one handler in `errors.guarded`.
"""

from __future__ import annotations

import enum


class CheckExit(enum.IntEnum):
    ALLOW = 0
    BLOCK = 1
    COULD_NOT_RUN = 2  # MANIFEST_INVALID or GATE_ERROR among the reasons (also a block)


class ShardExit(enum.IntEnum):
    """`check --shard I/N`: a shard decides nothing; `combine` exits as `check`."""

    PART_RAN = 0  # its units ran; bundle.json holds them (failures included)
    COULD_NOT_RUN = 2  # the bundle records a gate error, which `combine` reports


class ClassifyExit(enum.IntEnum):
    OK = 0
    EXPIRED_FREEZE = 2
    NO_ORACLE = 3
    INVALID = 4  # invalid manifest or freeze file
    COULD_NOT_RUN = 5  # not a repository, no HEAD, the tests could not be collected


class ReplayExit(enum.IntEnum):
    EVERY_FIXTURE_BIT = 0
    FAILED = 1  # a fixture stayed green or did not apply, or the oracle fails on HEAD
    COULD_NOT_RUN = 2
    NO_FIXTURES = 3


class LockExit(enum.IntEnum):
    MATCH = 0
    MISMATCH = 1
    COULD_NOT_RUN = 2


class FreezeExit(enum.IntEnum):
    OK = 0
    BAD_INPUT = 2
    COULD_NOT_RUN = 2  # bad input and errors share one code (contract)


class InitExit(enum.IntEnum):
    OK = 0
    COULD_NOT_WRITE = 2
    COULD_NOT_RUN = 2  # as for freeze


class DemoExit(enum.IntEnum):
    EVERY_VERDICT_AS_EXPECTED = 0
    SOME_VERDICT_DIFFERS = 1
    COULD_NOT_RUN = 2


class HarvestExit(enum.IntEnum):
    DONE = 0  # the report is written; missed fixes are findings, not failures
    COULD_NOT_RUN = 2  # bad input, or the oracle class does not pass on HEAD


class MutantsExit(enum.IntEnum):
    DONE = 0  # survivors are findings, not failures
    COULD_NOT_RUN = 2


class DisputeExit(enum.IntEnum):
    """`andgate dispute`: writing or listing the change's oracle disputes."""

    OK = 0  # the entry is written, or the disputes are listed
    REFUSED = 1  # not exactly one oracle item at base, or disputed already
    COULD_NOT_RUN = 2  # bad input, a malformed disputes file, no repository


class DoctorExit(enum.IntEnum):
    OK = 0  # nothing the next check would trip on
    PROBLEMS = 1  # something would; each is listed with its fix
    COULD_NOT_RUN = 2
