"""Where andgate was installed from, as the workflow's `uses:` pin (issue 37 item 4):
pip's `direct_url.json` of a git install from GitHub gives the repository and the
commit; anything else leaves the template's placeholder for the user to fill in."""

from __future__ import annotations

import json

import pytest
import yaml

from andgate import __version__
from andgate.commands.init import github_workflow
from andgate.commands.install_source import (
    ACTION_PLACEHOLDER,
    ActionPin,
    action_pin,
    installed_action_pin,
)

SHA = "0123456789abcdef0123456789abcdef01234567"


def vcs(url: str, commit: str = SHA, requested: str | None = "v0.3.0") -> str:
    info: dict[str, str] = {"vcs": "git", "commit_id": commit}
    if requested is not None:
        info["requested_revision"] = requested
    return json.dumps({"url": url, "vcs_info": info})


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/me/andgate",
        "https://github.com/me/andgate.git",
        "ssh://git@github.com/me/andgate.git",
        "https://token@github.com/me/andgate",
    ],
)
def test_a_git_install_from_github_pins_that_repository_at_the_installed_commit(url):
    pin = action_pin(vcs(url))
    assert pin == ActionPin("me/andgate", SHA, "v0.3.0")
    assert pin.uses == f"me/andgate@{SHA}  # v0.3.0"


def test_without_a_requested_tag_the_comment_is_the_installed_version():
    assert action_pin(vcs("https://github.com/me/andgate", requested=None)) == ActionPin(
        "me/andgate", SHA, f"v{__version__}"
    )
    odd = action_pin(vcs("https://github.com/me/andgate", requested="v1\n# evil"))
    assert odd is not None and odd.label == f"v{__version__}"


@pytest.mark.parametrize(
    "direct_url",
    [
        None,
        "",
        "not json",
        json.dumps({"url": "file:///home/me/andgate", "dir_info": {"editable": True}}),
        json.dumps({"url": "https://example.org/andgate-0.3.0-py3-none-any.whl"}),
        vcs("https://gitlab.com/me/andgate"),
        vcs("https://github.com.evil.example/me/andgate"),
        vcs("https://github.com/me/andgate", commit="v0.3.0"),
        json.dumps({"url": "https://github.com/me/andgate", "vcs_info": {"vcs": "hg"}}),
    ],
)
def test_any_other_install_gives_no_pin(direct_url):
    assert action_pin(direct_url) is None


def test_this_editable_install_gives_no_pin():
    assert installed_action_pin() is None  # the suite runs from an editable checkout
    assert installed_action_pin("no-such-distribution-here") is None


def test_the_workflow_is_pinned_when_the_source_is_known_and_left_to_edit_otherwise():
    assert f"uses: {ACTION_PLACEHOLDER}\n" in github_workflow()
    pinned = github_workflow(pin=ActionPin("me/andgate", SHA, "v0.3.0"))
    assert ACTION_PLACEHOLDER not in pinned
    steps = yaml.safe_load(pinned)["jobs"]["andgate"]["steps"]
    assert f"me/andgate@{SHA}" in [s.get("uses") for s in steps]
    assert f"uses: me/andgate@{SHA}  # v0.3.0\n" in pinned


def test_init_github_pins_the_repository_andgate_was_installed_from(make_repo, monkeypatch):
    from andgate.commands import init

    pin = ActionPin("me/andgate", SHA, "v0.3.0")
    monkeypatch.setattr(init, "installed_action_pin", lambda: pin)
    repo = make_repo({"README.md": "x\n"})
    assert init.run_init(repo.path, github=True) == 0
    written = (repo.path / init.GITHUB_WORKFLOW).read_text(encoding="utf-8")
    assert f"      - uses: {pin.uses}\n" in written
