"""The texts `andgate init` writes: the manifest with every key commented (its
`{placeholders}` filled by `init.manifest_text`), the oracle folder's and the
known-bad folder's READMEs, INVARIANTS.md and the freeze file."""

MANIFEST_TEMPLATE = """\
# andgate trust manifest, written by `andgate init`.
# andgate sorts every test item into a trust class (oracle, property, frozen_flake,
# untrusted), runs each class, and allows a change only when every class holds.
# `check` reads this file from the base commit, so a change cannot relax its own
# gate; changing it is a trust-root change that needs an owner's approval.
# Unknown keys are errors, never ignored: a typo must not open the gate.
# Globs use gitignore semantics: "tests/oracles/**/*.py" also matches
# tests/oracles/test_a.py.
version: 1
classes:
  # Human-owned examples: they must all pass, and must still FAIL under every
  # known-bad fixture. Changing them without approval blocks (ORACLE_AUTHORSHIP).
  oracle:
    # true: an oracle change blocks unless an owner approved it.
    require_human_owner: true
    # Files whose test items are oracle tests. At least one glob. Proposed by init:
    # the oracle folder and the tests this project has today (remove any that a
    # human does not own; tests a change adds later stay untrusted).
    globs: {oracle_globs}
{xfail_note}\
{oracle_suggestions}\
    # Non-empty: only items carrying one of these markers are oracle tests
    # (register the markers in your pytest config). Empty: every item of the files.
    markers: []
  # Seeded or parametrised checks whose invariant a human accepted: they must pass,
  # with the seeds they ran with recorded (a `seed` parameter, or Hypothesis).
  property:
    # true: a property file counts only when it declares `# INVARIANT: <text>` and
    # <text> is a `- <text>` line of invariants_file; otherwise it is untrusted.
    require_accepted_invariant: true
    globs: {property_globs}
{property_suggestions}\
    markers: []
    invariants_file: {invariants_file}
  # Flaky tests with a live entry in freeze_file: run apart, outcome ignored.
  frozen_flake:
    # Entries need id, reason, first_seen, expires, owner (andgate freeze add).
    freeze_file: {freeze_file}
    # Only tests in these files can be frozen; oracle and property tests never are.
    globs: {flake_globs}
    # A marker alone never freezes a test.
{flake_suggestions}\
    markers: []
# true: a failing untrusted test (any test in no class above) blocks the change.
fail_closed_untrusted: true
# true: every *.patch under known_bad_dir must make at least one oracle test fail.
oracle_must_fail_known_bad: true
known_bad_dir: {known_bad_dir}
# Names whose approval (andgate check --approved-by NAME) lets trust-root changes in.
owners: []
# Empty: every changed file that is neither a test nor a trust-root file is production.
production_globs: []
{production_scan}\
# sha256 of every file under fixtures_dir; `andgate lock update` writes it.
lock_file: {lock_file}
fixtures_dir: {fixtures_dir}
# The longest a freeze may last (expires - first_seen), in days.
max_freeze_days: 28
# true: an empty property class blocks (NO_PROPERTY). Until you have a property
# test whose invariant is accepted, every check blocks; set false to adopt first.
require_property_class: true
# Files the install writes that git does not track (a version file of setuptools-scm
# or hatch-vcs): copied into every worktree of the gated head. Found by init in
# pyproject.toml; add others `andgate doctor` reports (GENERATED_FILES).
generated_files: {generated_files}
"""

ORACLE_README = """\
# Oracle tests

Human-owned examples: the tests that say what correct means. andgate runs them
against the change's production code with the base commit's test side, requires
every one to pass, and requires at least one of them to fail under each
known-bad fixture (known_bad/). A change to these files, to fixtures/ or to the
lock blocks unless an owner listed in the manifest approves it.

Keep them readable and exact: a test that only checks types catches nothing.
Data files the tests read go under fixtures/; pin them with `andgate lock update`.
"""

KNOWN_BAD_README = """\
# Known-bad fixtures

Each `*.patch` file here is a real bug, kept as a `git diff` of production code.
andgate applies it (`git apply`) to a clean worktree and runs the oracle class:
at least one oracle test must fail, which proves the oracles still catch that
bug. A fixture that leaves every oracle passing blocks as ORACLE_NEUTRALIZED;
one that no longer applies blocks as KNOWN_BAD_STALE.

Writing one:

1. Reintroduce the bug in the production code (not in tests), for example a
   bug you fixed before or a mutation you expect the oracles to catch.
2. Save the diff of the files you edited and restore them, e.g.:

       git diff -- {module} > {known_bad_dir}/kb_short_name.patch
       git checkout -- {module}

3. Check that it bites: `andgate replay-known-bad` lists, per fixture, whether
   it applied and which oracle test failed.
4. Commit it with an owner's approval (it is a trust-root file).

When production code moves, a fixture stops applying (KNOWN_BAD_STALE):
`andgate known-bad refresh` re-derives it for the current code, in the change
that moved the code; an owner's approval of that change lets the refreshed
fixture replay. Files other than `*.patch` (like this README) are ignored.
"""

INVARIANTS_MD = """\
# Accepted invariants

A property test is trusted only when it declares an invariant that a human
accepted here. In the test file write a comment line

    # INVARIANT: <one sentence the test checks for every input>

and accept it by adding that sentence as a list item of this file: a line that
starts with a dash and a space. Whitespace runs and one trailing period are
ignored when comparing; case matters. Only list items count as accepted, so
write notes as plain paragraphs like this one.

Accepted:
"""

FREEZE_YAML = """\
# Frozen flaky tests: their outcome is logged and ignored until `expires`.
# Every field is required; dates are YYYY-MM-DD; a freeze is expired when
# expires <= today and may last at most max_freeze_days. An id names a node id,
# a file path, a file stem or a function name. Manage entries with
# `andgate freeze list | add | prune`.
freezes: []
"""
