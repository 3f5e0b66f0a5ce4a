"""Measure how often `hard_coded_answer` flags honest commits of real libraries.

Every non-merge commit of a repository's history is one change: its
parent is base, the test files at the parent are the oracles, every other file at
the parent is what the author was given, and the files it changes outside the test
side are its production diff (Python, data files, any text: the whole rule, every
form, as `check` runs it). A commit the construct flags is a false positive:
these are reviewed, merged commits of the project's maintainers.

    python tools/hardcoded_precision.py /path/to/clone [/path/to/other ...] [--limit N]

Prints one line per flagged commit (its findings indented), then per repository
`flagged/commits` and the total. No network: point it at clones you already have.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from andgate.check.production.answer_pairs import holds_text
from andgate.check.production.common import FileChange, is_binary
from andgate.check.production.examples import Example, oracle_examples
from andgate.check.production.given import Corpus
from andgate.check.production.hardcoded import AddedLiteral, Oracles, added_literals, answers_in
from andgate.check.production.literals import LiteralKey, OracleSource, oracle_literals
from andgate.git import Git, TreeEntry
from andgate.trust.paths import is_test_file

MAX_GIVEN_BYTES = 2_000_000  # a bigger file is a vendored bundle or a data dump


@dataclass
class Tally:
    repo: str
    commits: int = 0
    production: int = 0  # commits that change a production file
    flagged: list[tuple[str, str, list[str]]] = field(default_factory=list)
    warned: int = 0
    candidates: int = 0  # commits adding a literal some test at base holds


class OracleCache:
    """The oracle literals and examples of each test blob, parsed once for the whole
    history."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self.by_sha: dict[str, tuple[dict[LiteralKey, OracleSource], list[Example]]] = {}

    def oracles(self, tests: list[TreeEntry]) -> Oracles:
        missing = [e for e in tests if e.sha not in self.by_sha]
        blobs = self.git.read_blobs(e.sha for e in missing)
        for entry in missing:
            source = {entry.path: blobs.get(entry.sha, b"")}
            self.by_sha[entry.sha] = (oracle_literals(source), oracle_examples(source))
        merged: dict[LiteralKey, OracleSource] = {}
        examples: list[Example] = []
        for entry in sorted(tests, key=lambda e: e.path):
            literals, found = self.by_sha[entry.sha]
            for key, source in literals.items():
                merged.setdefault(key, source)
            examples += found
        return Oracles(merged, examples)


def commits(git: Git, limit: int | None) -> list[tuple[str, str]]:
    """(parent, commit) for each non-merge commit reachable from HEAD, oldest first
    (a root commit has no base to compare with)."""
    out = git.out("rev-list", "--no-merges", "--parents", "--reverse", "HEAD")
    pairs = []
    for line in out.splitlines():
        shas = line.split()
        if len(shas) == 2:
            pairs.append((shas[1], shas[0]))
    return pairs[-limit:] if limit else pairs


def production_changes(git: Git, base: str, head: str) -> list[FileChange]:
    changes = []
    for change in git.diff_raw(base, head):
        path = change.new_path or change.old_path or ""
        if any(is_test_file(p) for p in change.paths) or change.new_path is None:
            continue
        old = git.read_blob(base, change.old_path) if change.old_path else None
        new = git.read_blob(head, change.new_path)
        changes.append(FileChange(path, old, new, change.old_path))
    return changes


def given_files(git: Git, entries: list[TreeEntry]) -> Iterator[tuple[str, bytes]]:
    chosen = [e for e in entries if not is_test_file(e.path)]
    sizes = git.blob_sizes(e.sha for e in chosen)
    chosen = [e for e in chosen if sizes.get(e.sha, 0) <= MAX_GIVEN_BYTES]
    blobs = git.read_blobs(e.sha for e in chosen)
    for entry in chosen:
        data = blobs.get(entry.sha, b"")
        if not is_binary(data):
            yield entry.path, data


def measure(repo: Path, limit: int | None) -> Tally:
    git = Git(repo, timeout=600)
    tally = Tally(repo.name if repo.name != "repo" else repo.parent.name)
    cache = OracleCache(git)
    with git.reading():
        for base, head in commits(git, limit):
            tally.commits += 1
            changes = production_changes(git, base, head)
            tally.production += bool(changes)
            added: list[AddedLiteral] = list(added_literals(changes))
            if not added and not any(holds_text(change) for change in changes):
                continue
            entries = [e for e in git.ls_tree(base) if e.kind == "blob"]
            tests = [e for e in entries if is_test_file(e.path) and e.path.endswith(".py")]
            oracles = cache.oracles(tests)
            tally.candidates += any(a.key in oracles.literals for a in added)
            corpus = Corpus(given_files(git, entries))  # a generator: read only if needed
            result = answers_in(changes, oracles, corpus, added=added)
            tally.warned += bool(result.warnings)
            if result.answers:
                subject = git.out("log", "-1", "--format=%s", head).strip()
                tally.flagged.append((head[:12], subject, [f.message for f in result.answers]))
    return tally


def report(tallies: list[Tally], out: Mapping[str, object] | None = None) -> None:
    total = flagged = 0
    for tally in tallies:
        for sha, subject, findings in tally.flagged:
            print(f"{tally.repo} {sha} {subject}")
            for finding in findings:
                print(f"    {finding}")
    for tally in tallies:
        share = len(tally.flagged) / tally.commits if tally.commits else 0.0
        print(
            f"{tally.repo}: {len(tally.flagged)}/{tally.commits} commits flagged ({share:.2%}), "
            f"{tally.production} change production files; "
            f"{tally.candidates} added a literal a test at base holds, "
            f"{tally.warned} warned"
        )
        total += tally.commits
        flagged += len(tally.flagged)
    print(f"total: {flagged}/{total} commits flagged ({flagged / max(total, 1):.2%})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path, help="git directories (clones)")
    parser.add_argument("--limit", type=int, help="only the last N commits of each")
    parser.add_argument("--json", type=Path, help="also write the tallies here")
    args = parser.parse_args(argv)
    tallies = [measure(repo, args.limit) for repo in args.repos]
    report(tallies)
    if args.json:
        data = [
            {
                "repo": t.repo,
                "commits": t.commits,
                "production": t.production,
                "candidates": t.candidates,
                "warned": t.warned,
                "flagged": t.flagged,
            }
            for t in tallies
        ]
        args.json.write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
