"""Approvals from pull-request reviews, offline.

A local HTTP server on 127.0.0.1 serves GitHub REST responses kept under
tests/resources/github (trimmed to the fields GitHub documents for "list reviews
for a pull request" and "list commits on a pull request"). Every problem must end
as a warning and no approval, never as an approval.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from andgate.errors import ManifestError
from andgate.trust.github import (
    Approval,
    approvals_from_environment,
    approved_logins,
    latest_decisive,
    names_from_env,
    next_link,
    review_approvals,
    select_approvals,
)
from andgate.trust.manifest import APPROVAL_SOURCES, parse_manifest
from fake_github import FakeGitHub, running
from harness import MANIFEST

RESOURCES = Path(__file__).parents[1] / "resources" / "github"
HEAD = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
OLD = "aa5a315d61ae9438b18d0000000000000000cafe"
REPO = "octo-org/tinystats"
PULL = f"/repos/{REPO}/pulls/12"
OWNERS = ("alice", "bob", "dave")
TOKEN = "ghs_test-token"


def recorded(name: str) -> Any:
    return json.loads((RESOURCES / name).read_text(encoding="utf-8"))


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1")


@pytest.fixture
def github(no_proxy: None) -> Iterator[FakeGitHub]:
    with running() as fake:
        yield fake


@pytest.fixture
def other_host(no_proxy: None) -> Iterator[FakeGitHub]:
    """A second server: nothing must ever reach it (it would see the token)."""
    with running() as fake:
        yield fake


@pytest.fixture
def event(tmp_path: Path) -> Path:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(recorded("event_pull_request_review.json")), encoding="utf-8")
    return path


def serve_recorded(github: FakeGitHub) -> None:
    """The recorded PR: two pages of reviews, two commits."""
    page2 = f"{PULL}/reviews?per_page=100&page=2"
    github.serve(
        f"{PULL}/reviews?per_page=100",
        recorded("reviews_page1.json"),
        headers={"Link": f'<{github.url}{page2}>; rel="next", <{github.url}{page2}>; rel="last"'},
    )
    github.serve(page2, recorded("reviews_page2.json"))
    github.serve(f"{PULL}/commits?per_page=100", recorded("commits.json"))


def review(rid: int, login: str, state: str, commit: str = HEAD) -> dict[str, Any]:
    return {
        "id": rid,
        "user": {"login": login, "type": "User"},
        "state": state,
        "commit_id": commit,
        "submitted_at": f"2026-11-20T17:{rid % 60:02d}:00Z",
        "html_url": f"https://github.com/{REPO}/pull/12#pullrequestreview-{rid}",
    }


def serve_reviews(github: FakeGitHub, reviews: list[dict[str, Any]]) -> None:
    github.serve(f"{PULL}/reviews?per_page=100", reviews)
    github.serve(f"{PULL}/commits?per_page=100", recorded("commits.json"))


def approvals(github: FakeGitHub, event: Path | None, **overrides: Any):  # type: ignore[no-untyped-def]
    kwargs: dict[str, Any] = {
        "event_path": event,
        "token": TOKEN,
        "api_url": github.url,
        "repository": REPO,
        "gated_head": HEAD,
        "owners": OWNERS,
        "timeout": 5.0,
    }
    kwargs.update(overrides)
    return review_approvals(**kwargs)


# -- the rules --------------------------------------------------------------------------


def test_an_owners_approval_of_the_gated_head_counts_across_pages(github, event):
    serve_recorded(github)
    found, warnings = approvals(github, event)
    assert found == (
        Approval(
            login="alice",
            source="github-reviews",
            review_id=80,
            commit=HEAD,
            submitted_at="2026-11-20T17:31:04Z",
            url=f"https://github.com/{REPO}/pull/12#pullrequestreview-80",
        ),
    )
    assert found[0].to_json()["review_id"] == 80
    assert github.paths() == [
        f"{PULL}/reviews?per_page=100",
        f"{PULL}/reviews?per_page=100&page=2",
        f"{PULL}/commits?per_page=100",
    ]
    headers = github.seen[0][1]
    assert headers["Authorization"] == f"Bearer {TOKEN}"
    assert headers["Accept"] == "application/vnd.github+json"
    # carol approved but owns nothing; bob (an owner) asked for changes
    assert any("carol approved but is not in the base manifest's owners" in w for w in warnings)
    assert any("bob's latest review is changes_requested" in w for w in warnings)
    assert all("\n" not in w for w in warnings)


def test_a_dismissed_approval_does_not_count(github, event):
    serve_reviews(github, [review(1, "alice", "APPROVED"), review(2, "alice", "DISMISSED")])
    found, warnings = approvals(github, event)
    assert found == ()
    assert warnings == ("review not counted: alice's latest review is dismissed, not approved",)


def test_an_approval_of_an_older_commit_is_stale(github, event):
    serve_reviews(github, [review(1, "alice", "APPROVED", commit=OLD)])
    found, warnings = approvals(github, event)
    assert found == ()
    assert "alice approved aa5a315d61ae, not the gated head 6dcb09b5b578" in warnings[0]


def test_changes_requested_after_an_approval_withdraws_it_and_a_new_approval_restores_it(
    github, event
):
    serve_reviews(github, [review(1, "alice", "APPROVED"), review(2, "alice", "CHANGES_REQUESTED")])
    assert approvals(github, event)[0] == ()
    serve_reviews(
        github,
        [
            review(1, "alice", "APPROVED"),
            review(2, "alice", "CHANGES_REQUESTED"),
            review(3, "alice", "APPROVED"),
            review(4, "alice", "COMMENTED"),
            review(5, "alice", "PENDING"),
        ],
    )
    found, _ = approvals(github, event)
    assert [a.review_id for a in found] == [3]


@pytest.mark.parametrize(
    ("login", "why"),
    [
        ("agent-bot", "the pull request's author"),
        ("dave", "a commit author or committer"),  # committed the head commit
    ],
)
def test_nobody_approves_their_own_change(github, event, login, why):
    serve_reviews(github, [review(1, login, "APPROVED")])
    found, warnings = approvals(github, event, owners=(*OWNERS, "agent-bot"))
    assert found == ()
    assert why in warnings[0]


def test_owners_match_logins_case_insensitively_and_keep_the_manifests_spelling(github, event):
    serve_reviews(github, [review(1, "ALICE", "APPROVED")])
    found, _ = approvals(github, event, owners=("Alice",))
    assert approved_logins(found) == ("Alice",)


def test_reviews_with_no_user_are_skipped(github, event):
    ghost = review(1, "alice", "APPROVED")
    ghost["user"] = None
    serve_reviews(github, [ghost])
    assert approvals(github, event) == ((), ())


def test_latest_decisive_ignores_comments():
    latest = latest_decisive([review(1, "a", "APPROVED"), review(2, "a", "COMMENTED")])
    assert latest["a"]["id"] == 1


# -- every problem is a warning and no approval ------------------------------------------


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        (403, {}, "refused the token (HTTP 403)"),
        (401, {}, "refused the token (HTTP 401)"),
        (500, {}, "HTTP 500"),
        (404, {}, "HTTP 404"),
        (
            403,
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000000"},
            "rate limit exhausted (HTTP 403; resets at epoch 1800000000)",
        ),
        (429, {"x-ratelimit-remaining": "0"}, "rate limit exhausted (HTTP 429"),
        (403, {"retry-after": "60"}, "secondary rate limit (HTTP 403; retry after 60 s)"),
    ],
)
def test_http_errors_mean_no_approval(github, event, status, headers, expected):
    serve_recorded(github)
    github.serve(
        f"{PULL}/reviews?per_page=100&page=2",
        {"message": "nope"},
        status=status,
        headers=headers,
    )
    found, warnings = approvals(github, event)
    assert found == ()
    assert len(warnings) == 1
    assert warnings[0].startswith("no approval from pull-request reviews: ")
    assert expected in warnings[0]


def test_an_error_listing_commits_means_no_approval_even_with_good_reviews(github, event):
    serve_recorded(github)
    github.serve(f"{PULL}/commits?per_page=100", {"message": "boom"}, status=502)
    found, warnings = approvals(github, event)
    assert found == ()
    assert "HTTP 502" in warnings[0]


@pytest.mark.parametrize(
    "body", [b"not json", b'{"reviews": []}', b"[1, 2", b'"text"', b"\xff\xfe"]
)
def test_bad_json_means_no_approval(github, event, body):
    serve_recorded(github)
    github.serve(f"{PULL}/reviews?per_page=100", raw=body)
    found, warnings = approvals(github, event)
    assert found == ()
    assert "GitHub API" in warnings[0]


def test_malformed_items_never_approve(github, event):
    serve_reviews(github, [1, "x", {"id": "7", "user": {"login": "alice"}, "state": "APPROVED"}])
    assert approvals(github, event) == ((), ())


def test_a_next_page_on_another_host_is_refused_and_never_sees_the_token(github, other_host, event):
    serve_recorded(github)
    github.serve(
        f"{PULL}/reviews?per_page=100",
        recorded("reviews_page2.json"),
        headers={"Link": f'<{other_host.url}/steal?page=2>; rel="next"'},
    )
    found, warnings = approvals(github, event)
    assert found == ()
    assert "is not on" in warnings[0]
    assert other_host.seen == []


def test_a_redirect_is_not_followed(github, other_host, event):
    serve_recorded(github)
    github.serve(
        f"{PULL}/reviews?per_page=100",
        status=302,
        headers={"Location": f"{other_host.url}/elsewhere"},
    )
    found, warnings = approvals(github, event)
    assert found == ()
    assert "redirect" in warnings[0]
    assert other_host.seen == []


def test_pages_are_bounded(github, event):
    link = {"Link": f'<{github.url}{PULL}/reviews?per_page=100>; rel="next"'}
    github.serve(f"{PULL}/reviews?per_page=100", [review(1, "alice", "APPROVED")], headers=link)
    found, warnings = approvals(github, event, max_pages=3)
    assert found == ()
    assert "more than 3 pages" in warnings[0]
    assert len(github.seen) == 3


def test_a_slow_api_times_out(github, event):
    serve_recorded(github)
    github.routes[f"{PULL}/reviews?per_page=100"].delay = 2.0
    started = time.monotonic()
    found, warnings = approvals(github, event, timeout=0.3)
    assert found == ()
    assert "unreachable" in warnings[0]
    assert time.monotonic() - started < 2.0


def test_an_unreachable_api(event, no_proxy):
    found, warnings = review_approvals(
        event_path=event,
        token=TOKEN,
        api_url="http://127.0.0.1:9",
        repository=REPO,
        gated_head=HEAD,
        owners=OWNERS,
        timeout=2.0,
    )
    assert found == ()
    assert "unreachable" in warnings[0]


def test_the_gated_head_must_be_among_the_prs_commits(github, event):
    serve_reviews(github, [review(1, "alice", "APPROVED")])
    github.serve(f"{PULL}/commits?per_page=100", recorded("commits.json")[:1])
    found, warnings = approvals(github, event)
    assert found == ()
    assert "do not include the gated head" in warnings[0]


def test_a_pr_at_githubs_commit_limit_cannot_be_judged(github, event):
    serve_reviews(github, [review(1, "alice", "APPROVED")])
    commits = [{"sha": f"{i:040x}", "author": None, "committer": None} for i in range(250)]
    github.serve(f"{PULL}/commits?per_page=100", commits)
    found, warnings = approvals(github, event)
    assert found == ()
    assert "250+ commits" in warnings[0]


# -- the event and the environment ---------------------------------------------------------


def _event(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "other_event.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("missing", "GITHUB_EVENT_PATH is not set"),
        ("unreadable", "cannot read the event file"),
        ("push", "not a pull_request or pull_request_review event"),
        ("moved", "the event's head aa5a315d61ae is not the gated head 6dcb09b5b578"),
        ("no-number", "lacks number, head.sha or user.login"),
    ],
)
def test_event_problems_mean_no_approval(github, tmp_path, change, expected):
    serve_recorded(github)
    data = recorded("event_pull_request_review.json")
    path: Path | None
    if change == "missing":
        path = None
    elif change == "unreadable":
        path = _event(tmp_path, "{not json")
    elif change == "push":
        path = _event(tmp_path, {"ref": "refs/heads/main", "after": HEAD})
    elif change == "moved":
        data["pull_request"]["head"]["sha"] = OLD
        path = _event(tmp_path, data)
    else:
        del data["pull_request"]["number"]
        path = _event(tmp_path, data)
    found, warnings = approvals(github, path)
    assert found == ()
    assert expected in warnings[0]
    assert github.seen == []


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ({"token": None}, "GITHUB_TOKEN is not set"),
        ({"token": ""}, "GITHUB_TOKEN is not set"),
        ({"event_name": "push"}, "the workflow event is 'push'"),
        ({"event_name": "pull_request_target"}, "not pull_request or pull_request_review"),
        ({"gated_head": "HEAD"}, "is not a full commit SHA"),
        ({"repository": "no-slash"}, "is not owner/name"),
        ({"api_url": "file:///etc"}, "is not an http(s) URL"),
    ],
)
def test_input_problems_mean_no_approval(github, event, override, expected):
    serve_recorded(github)
    found, warnings = approvals(github, event, **override)
    assert found == ()
    assert expected in warnings[0]
    assert github.seen == []


def test_approvals_from_the_actions_environment(github, event):
    serve_recorded(github)
    environ = {
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request_review",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": REPO,
    }
    found, _ = approvals_from_environment(environ, gated_head=HEAD.upper(), owners=OWNERS)
    assert approved_logins(found) == ("alice",)


def test_next_link_parsing():
    header = (
        '<https://api.github.com/x?page=2>; rel="next", '
        '<https://api.github.com/x?page=5>; rel="last"'
    )
    assert next_link(header) == "https://api.github.com/x?page=2"
    assert next_link('<https://api.github.com/x?page=1>; rel="prev"') is None
    assert next_link(None) is None


# -- which sources count ---------------------------------------------------------------------


def test_sources_refused_by_the_manifest_are_ignored_with_a_reason():
    reviewed = Approval("alice", "github-reviews", 80, HEAD, "2026-11-20T17:31:04Z", "u")
    kept, warnings = select_approvals(
        allowed=("github-reviews",),
        owners=OWNERS,
        cli=("bob",),
        env=("dave",),
        reviews=(reviewed,),
    )
    assert kept == (reviewed,)
    assert warnings == (
        "approval by bob from --approved-by ignored: the base manifest's approvals.sources "
        "is [github-reviews]",
        "approval by dave from ANDGATE_APPROVED_BY ignored: the base manifest's "
        "approvals.sources is [github-reviews]",
    )


def test_every_source_counts_by_default_but_only_for_owners():
    kept, warnings = select_approvals(
        allowed=APPROVAL_SOURCES, owners=OWNERS, cli=("bob", "mallory", "bob"), env=("bob",)
    )
    assert [(a.login, a.source) for a in kept] == [("bob", "cli"), ("bob", "env")]
    assert approved_logins(kept) == ("bob",)
    assert warnings == (
        "approval by mallory from --approved-by ignored: not in the base manifest's owners",
    )


def test_names_from_env():
    assert names_from_env(" alice, ,bob,alice ") == ("alice", "bob")
    assert names_from_env(None) == ()


# -- the manifest key -----------------------------------------------------------------------


def test_manifest_approval_sources_default_to_all_three():
    assert parse_manifest(MANIFEST, "m.yaml").approval_sources == APPROVAL_SOURCES


def test_manifest_approval_sources_can_refuse_cli_and_env():
    text = MANIFEST + "approvals:\n  sources: [github-reviews]\n"
    assert parse_manifest(text, "m.yaml").approval_sources == ("github-reviews",)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (
            "approvals:\n  sources: [cli, github-review]\n",
            "m.yaml: approvals.sources has unknown source 'github-review'; "
            "valid sources: cli, env, github-reviews",
        ),
        ("approvals:\n  sources: cli\n", "approvals.sources must be a list"),
        ("approvals:\n  source: [cli]\n", "unknown key 'source' under approvals"),
        ("approvals: [cli]\n", "approvals must be a mapping"),
    ],
)
def test_manifest_approval_sources_are_validated(block, message):
    with pytest.raises(ManifestError) as info:
        parse_manifest(MANIFEST + block, "m.yaml")
    assert message in str(info.value)


# -- end to end: `check --approvals github-reviews` and the Actions outputs ----------------


@pytest.mark.slow
def test_an_owners_review_of_the_gated_head_approves_a_trust_root_change(
    sample, github, tmp_path, monkeypatch
):
    def conftest_edit(repo):  # type: ignore[no-untyped-def]
        repo.write({"tests/conftest.py": "# the owner asked for this comment\n"})

    head = sample.change(conftest_edit)
    github.serve(
        "/repos/octo-org/tinystats/pulls/12/reviews?per_page=100",
        [
            {
                "id": 90,
                "user": {"login": "alice"},
                "state": "APPROVED",
                "commit_id": head,
                "html_url": "https://github.com/octo-org/tinystats/pull/12#pullrequestreview-90",
                "submitted_at": "2026-11-25T10:00:00Z",
            }
        ],
    )
    github.serve(
        "/repos/octo-org/tinystats/pulls/12/commits?per_page=100",
        [{"sha": head, "author": {"login": "agent-bot"}, "committer": {"login": "agent-bot"}}],
    )
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {"pull_request": {"number": 12, "user": {"login": "agent-bot"}, "head": {"sha": head}}}
        )
    )
    for name, value in {
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request_review",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": "octo-org/tinystats",
    }.items():
        monkeypatch.setenv(name, value)
    without = sample.gate(head)
    assert "TRUST_ROOT_CHANGED" in without.codes
    run = sample.gate(head, approvals="github-reviews")
    assert run.decision == "allow", run.payload["reasons"]
    (approval,) = run.payload["approvals"]
    assert len(approval.pop("protected_digest")) == 64  # what the approval covers
    assert [approval] == [
        {
            "login": "alice",
            "source": "github-reviews",
            "review_id": 90,
            "commit": head,
            "submitted_at": "2026-11-25T10:00:00Z",
            "url": "https://github.com/octo-org/tinystats/pull/12#pullrequestreview-90",
        }
    ]


@pytest.mark.slow
def test_in_github_actions_the_check_writes_outputs_summary_and_annotations(
    sample, tmp_path, monkeypatch, capsys
):
    from andgate.commands.cli import main

    def break_mean(repo):  # type: ignore[no-untyped-def]
        repo.edit("minilib/mathx.py", "return sum(xs) / len(xs)", "return sum(xs) / 3")

    head = sample.change(break_mean)
    outputs, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    args = ["check", "--repo", str(sample.path), "--base", sample.base, "--head", head]
    code = main([*args, "--today", "2026-11-25", "--artifacts", str(tmp_path / "art"), "--quiet"])
    err = capsys.readouterr().err  # annotations go to stderr: stdout stays the verdict
    assert code == 1
    assert "verdict=block" in outputs.read_text()
    assert "# andgate: ❌ BLOCK" in summary.read_text()
    assert "::error file=tests/oracles/test_math_oracle.py,line=" in err
