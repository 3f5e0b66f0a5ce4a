"""Where this andgate was installed from, as the workflow's `uses:` pin.

The GitHub Action installs andgate from its own checkout (`action.yml`: `pip install
"$ACTION_PATH"`), so the repository and ref a workflow's `uses:` names are the andgate
that gates. andgate has no published release location: each user installs it from a
repository of their own (a fork or mirror). pip records how it installed a distribution
from a URL (`direct_url.json`, PEP 610); when that was a GitHub repository by git
(`pip install "andgate @ git+https://github.com/OWNER/andgate@v0.3.0"`), `init --github`
pins the action to that repository at the commit pip installed, the tag as a comment,
as GitHub's hardening guide asks of a required check. Any other install (a local clone,
a wheel, another git host) leaves the template's `OWNER/andgate` line for the user to
edit, and its comment says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from andgate import __version__

# The template's action line, replaced when the install source is known.
ACTION_PLACEHOLDER = f"OWNER/andgate@v{__version__}"
GITHUB_REPOSITORY = re.compile(
    r"(?:https|ssh|git)://(?:[^@/\s]+@)?github\.com[/:]"
    r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/(?P<name>[A-Za-z0-9._-]{1,100}?)(?:\.git)?/?"
)
COMMIT = re.compile(r"[0-9a-f]{40}")
LABEL = re.compile(r"[\w.+/-]{1,100}")  # a tag or branch name safe in a YAML comment


@dataclass(frozen=True)
class ActionPin:
    """`owner/name` at a full commit SHA, with the tag (or branch) it was asked for."""

    repository: str
    commit: str
    label: str

    @property
    def uses(self) -> str:
        return f"{self.repository}@{self.commit}  # {self.label}"


def installed_action_pin(distribution: str = "andgate") -> ActionPin | None:
    """The pin for this andgate's own install, or None when it is not known."""
    try:
        text = metadata.distribution(distribution).read_text("direct_url.json")
    except (metadata.PackageNotFoundError, OSError, UnicodeDecodeError, ValueError):
        return None
    return action_pin(text)


def action_pin(direct_url: str | None) -> ActionPin | None:
    """The pin a `direct_url.json` gives: a git install from a GitHub repository
    with a full commit id; None for anything else (a folder, an archive, a wheel)."""
    try:
        data: Any = json.loads(direct_url) if direct_url else None
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("vcs_info"), dict):
        return None
    vcs, url = data["vcs_info"], data.get("url")
    commit = vcs.get("commit_id")
    if vcs.get("vcs") != "git" or not isinstance(url, str) or not isinstance(commit, str):
        return None
    found = GITHUB_REPOSITORY.fullmatch(url)
    if found is None or not COMMIT.fullmatch(commit):
        return None
    requested = vcs.get("requested_revision")
    asked = isinstance(requested, str) and LABEL.fullmatch(requested) and requested != commit
    label = requested if asked and isinstance(requested, str) else f"v{__version__}"
    return ActionPin(f"{found['owner']}/{found['name']}", commit, label)
