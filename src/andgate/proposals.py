"""The proposals folder: where candidate known-bad fixtures are written.

Never `known_bad_dir`: a fixture there is part of the trust root, and putting
one there is an owner's change, reviewed as such. A folder andgate creates gets
its own `.gitignore` (as the artifacts folder does), so proposals never show up
in `git status` by accident.
"""

from __future__ import annotations

import os
from pathlib import Path

from andgate.commands.common import write_atomic
from andgate.errors import BadInput
from andgate.report import claim_ignored_artifacts

DEFAULT_OUT = "artifacts/known_bad_proposals"


def proposals_folder(root: Path, out: Path | None, known_bad_dir: str) -> Path:
    """The folder to write into, refused when it is a symlink or inside known_bad_dir."""
    artifacts = root / DEFAULT_OUT.split("/")[0]
    folder = out if out is not None else root / DEFAULT_OUT
    if out is None or os.path.abspath(folder).startswith(os.path.abspath(artifacts) + os.sep):
        claim_ignored_artifacts(root)  # created here first: self-ignored, as check leaves it
    if folder.is_symlink():
        raise BadInput(f"--out {folder}: is a symbolic link; pass a real folder")
    guarded = os.path.realpath(root / known_bad_dir)
    real = os.path.realpath(folder)
    if real == guarded or real.startswith(guarded + os.sep):
        raise BadInput(
            f"--out {folder}: is inside known_bad_dir ({known_bad_dir}); promoting a "
            "candidate there is an owner's trust-root change: pass a folder outside it"
        )
    return folder


def open_folder(folder: Path) -> Path:
    """Create the folder (with its own .gitignore when andgate made it)."""
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / ".gitignore", b"# written by andgate: proposals, not fixtures\n*\n")
    return folder


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    write_atomic(path, data)
    return path
