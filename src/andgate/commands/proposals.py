"""The proposals folder: where candidate known-bad fixtures are written.

Never `known_bad_dir`: a fixture there is part of the trust root, and putting
one there is an owner's change, reviewed as such. A folder andgate creates gets
its own `.gitignore` (as the artifacts folder does), so proposals never show up
in `git status` by accident. The folder is claimed when the command starts, before
any test runs, and written through its descriptor (`writer.Folder`): a symlink
committed or planted anywhere below the repository's top is refused, never followed.
"""

from __future__ import annotations

import os
from pathlib import Path

from andgate import writer
from andgate.errors import BadInput
from andgate.report.folder import claim_ignored_artifacts

DEFAULT_OUT = "artifacts/known_bad_proposals"
GITIGNORE = b"# written by andgate: proposals, not fixtures\n*\n"


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


def claim(root: Path, folder: Path) -> writer.Folder:
    """Open (or create, with its .gitignore) the folder, every level from the
    repository's top without following a symlink."""
    fresh = not os.path.lexists(folder)
    try:
        claimed = writer.Folder.claim(folder, anchor=root)
    except writer.RefusedPath as exc:
        raise BadInput(f"--out {folder}: {exc.at} is a symbolic link; pass a real folder") from exc
    except OSError as exc:
        raise BadInput(f"--out {folder}: cannot write there ({exc.strerror or exc})") from exc
    if fresh:
        claimed.put(".gitignore", GITIGNORE)
    return claimed
