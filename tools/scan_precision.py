"""How often do the production scan's constructs flag honest commits?

    python tools/scan_precision.py --construct source_encoding --construct symlink \
        /path/to/click.git /path/to/requests.git /path/to/toolz.git

Every commit of each repository's history but merges is taken as a change (its diff
against its parent), its production files sorted the way `check` sorts them
without a manifest (every changed file that is not a test file), and scanned with
`scan.scan_production` exactly as `check` scans a change. A commit counts as flagged
when one of the named constructs is found in it; the repositories' own history is
taken as honest, so every flag is a false alarm to read. Prints one line per
repository and construct, the flagged commits with their findings, and with `--json`
the same as data. Reads the repositories only (through `andgate.git`), writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from andgate.check.production.common import FileChange, ScanFinding
from andgate.check.production.scan import FAMILIES, scan_production
from andgate.git import Git
from andgate.records import Construct
from andgate.trust.paths import is_test_file

EVASIONS = (
    Construct.SOURCE_ENCODING,
    Construct.SYMLINK,
    Construct.PYTEST_PLUGIN,
    Construct.ENVIRONMENT_WRITE,
    Construct.SYSTEM_FILE_WRITE,
)
# Larger files are generated data, never what the scan is tuned for; `check` scans
# them too, but reading every version of a vendored bundle would take the tool hours.
MAX_BYTES = 1_000_000
BATCH = 400  # commits whose blobs are read in one `cat-file`


@dataclass
class Tally:
    repo: str
    commits: int = 0
    flagged: Counter[Construct] = field(default_factory=Counter)
    examples: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class RawEntry:
    """One file of a commit's `--raw` diff, with its blobs' shas."""

    old_mode: str
    new_mode: str
    old_sha: str
    new_sha: str
    old_path: str | None
    new_path: str | None


NO_BLOB = "0" * 40


def history(git: Git, limit: int | None) -> list[tuple[str, list[RawEntry]]]:
    """(commit, its diff against its parent), newest first, in one `git log`: every
    commit that is not a merge, each one change its author made."""
    args = ["log", "--no-merges", "--raw", "--no-abbrev"]
    args += ["-M", "-z", "--format=%x01%H"]
    if limit:
        args.append(f"--max-count={limit}")
    out = git.run(*args, "HEAD").stdout.decode("utf-8", "surrogateescape")
    commits = []
    for chunk in out.split("\x01")[1:]:
        head, _, raw = chunk.partition("\n")
        commits.append((head.strip("\0").strip(), list(_raw_entries(raw))))
    return commits


def _raw_entries(raw: str) -> Iterator[RawEntry]:
    fields = raw.strip("\0\n").split("\0")
    i = 0
    while i < len(fields):
        meta = fields[i].lstrip("\n")
        if not meta.startswith(":"):
            i += 1
            continue
        old_mode, new_mode, old_sha, new_sha, status = meta[1:].split(" ")
        paths = fields[i + 1 : i + (3 if status[0] in "RC" else 2)]
        i += 1 + len(paths)
        old = paths[0] if status[0] != "A" else None
        new = paths[-1] if status[0] != "D" else None
        yield RawEntry(old_mode, new_mode, old_sha, new_sha, old, new)


def production_changes(entries: list[RawEntry], blobs: dict[str, bytes]) -> list[FileChange]:
    changes = []
    for entry in entries:
        path = entry.new_path or entry.old_path or ""
        if is_test_file(path):
            continue
        changes.append(
            FileChange(
                path=path,
                old=blobs.get(entry.old_sha) if entry.old_path else None,
                new=blobs.get(entry.new_sha) if entry.new_path else None,
                old_path=entry.old_path if entry.old_path != entry.new_path else None,
                old_mode=entry.old_mode if entry.old_path else None,
                new_mode=entry.new_mode if entry.new_path else None,
            )
        )
    return changes


def _blobs(git: Git, entries: list[RawEntry]) -> dict[str, bytes]:
    wanted = {
        sha
        for e in entries
        if not is_test_file(e.new_path or e.old_path or "")
        for sha in (e.old_sha, e.new_sha)
        if sha != NO_BLOB and not sha.startswith("0000000")
    }
    sizes = git.blob_sizes(wanted)
    small = [sha for sha in wanted if sizes.get(sha, 0) <= MAX_BYTES]
    blobs = git.read_blobs(small)
    return {sha: blobs.get(sha, b"") for sha in wanted}


def measure(repo: Path, constructs: Sequence[Construct], limit: int | None) -> Tally:
    git = Git(repo)
    tally = Tally(str(repo))
    commits = history(git, limit)
    for start in range(0, len(commits), BATCH):
        batch = commits[start : start + BATCH]
        blobs = _blobs(git, [e for _, entries in batch for e in entries])
        for commit, entries in batch:
            tally.commits += 1
            found = _scan(production_changes(entries, blobs), constructs)
            for construct in {f.construct for f in found}:
                tally.flagged[construct] += 1
            for finding in found:
                tally.examples.append((commit[:12], finding.message))
    return tally


def _scan(changes: list[FileChange], constructs: Sequence[Construct]) -> list[ScanFinding]:
    """The scan's findings of `constructs` in `changes`, as `scan_production` finds them.
    Unless other constructs are asked for, only the evasions' families run, without
    their scope-walk and line rules (the evasions are file rules and plain-walk rules):
    the whole scan over thousands of commits takes an hour on a shared machine."""
    if not changes:
        return []
    families = FAMILIES
    if set(constructs) <= set(EVASIONS):
        families = tuple(
            replace(f, statement_rules=(), expression_rules=(), node_rules=(), line_rules=())
            for f in FAMILIES
            if f.constructs & set(EVASIONS)
        )
    found = scan_production(
        changes, shadowed=frozenset(), project_packages=frozenset(), families=families
    )
    return [f for f in found if f.construct in constructs]


def report(tallies: Sequence[Tally], constructs: Sequence[Construct]) -> list[str]:
    lines = []
    for tally in tallies:
        any_flag = len({commit for commit, _ in tally.examples})
        lines.append(f"{tally.repo}: {tally.commits} commits, {any_flag} flagged")
        for construct in constructs:
            lines.append(f"  {construct}: {tally.flagged[construct]}")
        lines += [f"    {commit} {message}" for commit, message in tally.examples]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path, help="git repositories (bare is fine)")
    parser.add_argument(
        "--construct",
        action="append",
        choices=[c.value for c in Construct],
        help="constructs to count (default: the production-side evasions)",
    )
    parser.add_argument("--limit", type=int, default=None, help="newest N commits per repo")
    parser.add_argument("--json", type=Path, default=None, help="also write the tallies here")
    args = parser.parse_args(argv)
    constructs = [Construct(c) for c in args.construct] if args.construct else list(EVASIONS)
    tallies = [measure(repo, constructs, args.limit) for repo in args.repos]
    print("\n".join(report(tallies, constructs)))
    if args.json is not None:
        data = [
            {
                "repo": t.repo,
                "commits": t.commits,
                "flagged": {c.value: t.flagged[c] for c in constructs},
                "findings": t.examples,
            }
            for t in tallies
        ]
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
