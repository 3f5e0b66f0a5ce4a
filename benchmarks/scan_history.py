"""How often would the production scan stop an honest commit?

`python benchmarks/scan_history.py GIT_DIR [--commits 200] [--quiet]` walks the last
N non-merge commits of a repository (a bare git directory is fine), builds the
`FileChange`s of each commit's production files (not test files by
`andgate.trust.paths.is_test_file`, not documentation), runs
`andgate.check.production.scan.scan_production` on them with `shadowed` = the standard
library's module names plus the project's own top-level packages and an empty
allow-list, and prints every finding per commit and
a total: commits scanned, commits with at least one finding, findings by construct.

Standard library plus andgate. Nothing from the scanned repository is written anywhere.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import PurePosixPath

from andgate.check.production.common import FileChange, ScanFinding
from andgate.check.production.scan import scan_production
from andgate.trust.paths import is_test_file

DOC_DIRS = frozenset({"docs", "doc"})
DOC_SUFFIXES = frozenset({".rst", ".md", ".txt"})
PACKAGE_ROOTS = ("", "src")
NOT_PACKAGES = frozenset({"src", "setup", "noxfile", "tasks", "docs", "examples", "benchmarks"})
ZERO = "0" * 40


class Repo:
    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self.batch = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def run(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args],
            capture_output=True,
            check=True,
            timeout=120,
        )
        return proc.stdout.decode("utf-8", "surrogateescape")

    def blob(self, sha: str) -> bytes | None:
        if sha == ZERO:
            return None
        assert self.batch.stdin and self.batch.stdout
        self.batch.stdin.write(sha.encode() + b"\n")
        self.batch.stdin.flush()
        header = self.batch.stdout.readline().split()
        size = int(header[2])
        data = self.batch.stdout.read(size)
        self.batch.stdout.read(1)  # the newline after the object
        return data

    def close(self) -> None:
        assert self.batch.stdin
        self.batch.stdin.close()
        self.batch.wait(timeout=30)


def is_doc(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p in DOC_DIRS for p in parts[:-1]) or PurePosixPath(path).suffix in DOC_SUFFIXES


def is_production(path: str) -> bool:
    return not is_test_file(path) and not is_doc(path)


def changes_of(repo: Repo, commit: str, parent: str) -> list[FileChange]:
    raw = repo.run("diff-tree", "-r", "-M", "--no-commit-id", "--raw", "-z", parent, commit)
    fields = raw.split("\0")
    changes = []
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].lstrip(":").split()
        status = meta[4]
        if status[0] in "RC":
            old_path, path = fields[i + 1], fields[i + 2]
            i += 3
        else:
            old_path = path = fields[i + 1]
            i += 2
        if meta[0] == "160000" or meta[1] == "160000":
            continue  # a submodule: no blob
        if not (is_production(path) or is_production(old_path)):
            continue
        old, new = repo.blob(meta[2]), repo.blob(meta[3])
        changes.append(FileChange(path, old, new, old_path if old_path != path else None))
    return changes


def own_packages(repo: Repo, commit: str) -> frozenset[str]:
    """Top-level packages and modules of the project at `commit` (at the root or in `src/`)."""
    found = set()
    for root in PACKAGE_ROOTS:
        try:
            listing = repo.run("ls-tree", f"{commit}:{root}" if root else commit)
        except subprocess.CalledProcessError:
            continue  # no such folder
        for entry in listing.splitlines():
            meta, name = entry.split("\t", 1)
            kind = meta.split()[1]
            path = f"{root}/{name}" if root else name
            if kind == "tree" and name.isidentifier() and is_production(f"{path}/__init__.py"):
                found.add(name)
            elif kind == "blob" and name.endswith(".py") and is_production(path):
                found.add(name[:-3])
    return frozenset(found - NOT_PACKAGES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir")
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--quiet", action="store_true", help="only commits with findings")
    args = parser.parse_args(argv)
    repo = Repo(args.git_dir)
    log = repo.run("log", "--no-merges", f"-n{args.commits}", "--format=%H %P|%s")
    by_construct: Counter[str] = Counter()
    hit_commits = 0
    started = time.monotonic()
    lines = log.splitlines()
    for line in lines:
        shas, subject = line.split("|", 1)
        commit, *parents = shas.split()
        parent = parents[0] if parents else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        packages = own_packages(repo, parent) if parents else frozenset()
        changes = changes_of(repo, commit, parent)
        shadowed = frozenset(sys.stdlib_module_names) | packages
        findings: list[ScanFinding] = scan_production(
            changes, shadowed=shadowed, project_packages=packages
        )
        if findings:
            hit_commits += 1
        if findings or not args.quiet:
            print(f"{commit[:10]} {subject[:70]}  ({len(changes)} production files)")
        for finding in findings:
            by_construct[finding.construct.value] += 1
            print(f"    {finding.message}")
    repo.close()
    print()
    print(f"commits scanned: {len(lines)}")
    print(f"commits with at least one finding: {hit_commits}")
    for construct, count in sorted(by_construct.items()):
        print(f"    {construct}: {count}")
    print(f"time: {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
