"""Approvals bound to protected bytes, and approvals under CI.

An owner's review of an earlier commit of a pull request counts for head when the
protected diff (base and reviewed commit, base and head) is the same; a merge of base
that touches no protected file keeps it, any protected change drops it and names the
files. Under CI, `ANDGATE_APPROVED_BY` never counts and `--approved-by` only when base's
manifest lists `cli` itself. The reviews come from the local fake API (fake_github.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from andgate.commands.sample import AGENT, SampleRepo
from andgate.errors import AndgateError
from andgate.records import ChangeFacts
from andgate.trust.approvals import ReviewBinder, gather_approvals
from andgate.trust.config import load_base_config
from andgate.trust.github import Approval, approves_head
from andgate.trust.manifest import parse_manifest
from andgate.trust.protected import ProtectedReader
from andgate.trust.refs import refuse_refs_other_than_the_event
from andgate.verdict import authorship_findings
from fake_github import FakeGitHub, actions_environment, pull_request_event, review, running
from harness import MANIFEST

MANIFEST_PATH = "tests/trust_manifest.yaml"
CONFTEST = {"tests/conftest.py": "# the owner asked for this comment\n"}
WORKFLOW = ".github/workflows/andgate.yml"


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with running() as fake:
        yield fake


# -- the history: a reviewed commit, then base moves and is merged in -------------------


def commit_on(repo: SampleRepo, start: str, files: dict[str, str], who=AGENT, msg="c") -> str:  # type: ignore[no-untyped-def]
    repo.run("checkout", "-q", "--detach", start)
    repo.write(files)
    return repo.commit(msg, who=who)


def merge(repo: SampleRepo, ours: str, theirs: str, *options: str) -> str:
    repo.run("checkout", "-q", "--detach", ours)
    repo.run("merge", "-q", "--no-edit", "--no-ff", *options, theirs, who=AGENT)
    return repo.git.resolve("HEAD", what="HEAD")


def binder_for(repo: SampleRepo, base: str, head: str) -> ReviewBinder:
    config = load_base_config(repo.git, base, MANIFEST_PATH)
    return ReviewBinder(ProtectedReader(repo.git, config), base, head)


def bind(repo: SampleRepo, base: str, head: str, reviewed: str):  # type: ignore[no-untyped-def]
    return binder_for(repo, base, head)(review(7, "alice", "APPROVED", reviewed))


def main_only(repo: SampleRepo, at: str) -> dict[str, str]:
    """A production-only commit on the base branch."""
    text = (repo.git.read_blob(at, "minilib/mathx.py") or b"").decode()
    return {"minilib/mathx.py": text + "\n# main\n"}


def test_a_base_merge_that_touches_no_protected_file_keeps_the_approval(sample):
    repo = sample.repo
    reviewed = commit_on(repo, sample.base, CONFTEST)
    main = commit_on(repo, sample.base, main_only(repo, sample.base), msg="main")
    head = merge(repo, reviewed, main)
    binding = bind(repo, main, head, reviewed)
    assert binding.digest is not None and binding.changed == ()
    # a production-only commit of the pull request after the review keeps it too
    later = commit_on(repo, head, {"minilib/text.py": "# rewritten by the agent\n"})
    assert bind(repo, main, later, reviewed).digest == binding.digest


ORACLE = "tests/oracles/test_math_oracle.py"
LOCK = "tests/oracles/locks.sha256"
PROTECTED_EDITS = {
    ORACLE: "def test_nothing():\n    pass\n",
    LOCK: "# a comment the lock reader ignores\n",
    WORKFLOW: "on: pull_request\n",
    "tests/test_misc.py": "# the oracle process would take this helper from head\n",
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p x"\n',
}


@pytest.mark.parametrize("named", list(PROTECTED_EDITS))
def test_a_protected_change_after_the_review_drops_it_and_names_the_file(sample, named):
    repo = sample.repo
    reviewed = commit_on(repo, sample.base, CONFTEST)
    head = commit_on(repo, reviewed, {named: PROTECTED_EDITS[named]})
    binder = binder_for(repo, sample.base, head)
    binding = binder(review(7, "alice", "APPROVED", reviewed))
    assert binding.digest is None
    assert binding.changed == (named,)
    assert [r.changed for r in binder.ignored] == [(named,)]


def test_a_base_merge_that_changes_a_protected_file_drops_it(sample):
    repo = sample.repo
    reviewed = commit_on(repo, sample.base, CONFTEST)
    main = commit_on(repo, sample.base, {WORKFLOW: "on: push\n"}, msg="main adds a workflow")
    head = merge(repo, reviewed, main)
    assert bind(repo, main, head, reviewed).changed == (WORKFLOW,)


def test_a_base_change_to_a_file_head_keeps_as_reviewed_still_drops_it(sample):
    """The owner approved base-then -> reviewed; base changed the same file since and
    the merge kept the reviewed bytes: head's diff against base is not what was seen."""
    repo = sample.repo
    reviewed = commit_on(repo, sample.base, CONFTEST)
    main = commit_on(repo, sample.base, {"tests/conftest.py": "# base's own\n"}, msg="main")
    head = merge(repo, reviewed, main, "-X", "ours")
    assert repo.git.read_blob(head, "tests/conftest.py") == CONFTEST["tests/conftest.py"].encode()
    assert bind(repo, main, head, reviewed).changed == ("tests/conftest.py",)


def test_renames_deletions_and_mode_changes_are_protected_changes(sample):
    repo = sample.repo
    oracle = "tests/oracles/test_text_oracle.py"
    reviewed = commit_on(repo, sample.base, CONFTEST)
    repo.run("checkout", "-q", "--detach", reviewed)
    repo.run("mv", oracle, "tests/oracles/test_text_oracle_moved.py")
    renamed = repo.commit("rename", who=AGENT)
    assert bind(repo, sample.base, renamed, reviewed).changed == (
        oracle,
        "tests/oracles/test_text_oracle_moved.py",
    )
    repo.run("checkout", "-q", "--detach", reviewed)
    (repo.path / oracle).chmod(0o755)
    moded = repo.commit("mode", who=AGENT)
    assert bind(repo, sample.base, moded, reviewed).changed == (oracle,)
    repo.run("checkout", "-q", "--detach", reviewed)
    repo.delete("tests/conftest.py")
    deleted = repo.commit("delete", who=AGENT)
    assert bind(repo, sample.base, deleted, reviewed).changed == ("tests/conftest.py",)


def test_a_version_bump_in_pyproject_keeps_the_approval(sample):
    repo = sample.repo
    pyproject = (
        '[project]\nname = "minilib"\nversion = "{}"\n\n'
        "[tool.pytest.ini_options]\nxfail_strict = true\n"
    )
    base = commit_on(repo, sample.base, {"pyproject.toml": pyproject.format("1.0")}, msg="base")
    reviewed = commit_on(repo, base, CONFTEST)
    main = commit_on(repo, base, {"pyproject.toml": pyproject.format("1.1")}, msg="bump")
    head = merge(repo, reviewed, main)
    assert bind(repo, main, head, reviewed).digest is not None


def test_a_reviewed_commit_missing_from_the_clone_never_binds(sample):
    binding = bind(sample.repo, sample.base, sample.base, "ab" * 20)
    assert binding.digest is None and "not in this clone" in (binding.problem or "")


# -- which rules an earlier-commit approval lifts -----------------------------------------


def test_an_earlier_commit_approval_lifts_authorship_but_not_suspicious_production():
    facts = ChangeFacts(
        trust_root_paths=("tests/conftest.py",),
        oracle_paths=("tests/oracles/test_x.py",),
        suspicious=("minilib/x.py:3: stack inspection",),
        approved_by=("alice",),
        earlier_commit_only=True,
    )
    assert [f.code.value for f in authorship_findings(facts)] == ["PRODUCTION_SUSPICIOUS"]
    on_head = ChangeFacts(**{**facts.__dict__, "earlier_commit_only": False})
    assert authorship_findings(on_head) == []


def test_only_an_approval_of_head_itself_covers_what_head_collects():
    earlier = Approval("alice", "github-reviews", 1, "ab" * 20, on_head=False)
    assert not approves_head([earlier])
    assert approves_head([earlier, Approval("alice", "cli")])


# -- approvals under CI ---------------------------------------------------------------------


EXPLICIT_CLI = parse_manifest(
    MANIFEST + "approvals:\n  sources: [cli, github-reviews]\n", MANIFEST_PATH
)
DEFAULT_SOURCES = parse_manifest(MANIFEST, MANIFEST_PATH)


@pytest.mark.parametrize("variable", ["GITHUB_ACTIONS", "CI", "GITHUB_EVENT_PATH"])
def test_under_ci_the_command_line_counts_only_when_base_lists_cli_itself(variable):
    environ = {variable: "true"}
    kept, warnings = gather_approvals(
        DEFAULT_SOURCES, "ab" * 20, cli=("alice",), env=("alice",), environ=environ
    )
    assert kept == ()
    texts = [w.detail for w in warnings]
    assert any("--approved-by ignored" in t and "lists cli" in t for t in texts)
    assert any("ANDGATE_APPROVED_BY ignored" in t for t in texts)
    kept, warnings = gather_approvals(
        EXPLICIT_CLI, "ab" * 20, cli=("alice",), env=("alice",), environ=environ
    )
    assert [(a.login, a.source) for a in kept] == [("alice", "cli")]
    assert all(w.code.value == "APPROVAL_IGNORED" for w in warnings)


def test_outside_ci_the_default_sources_still_count_the_command_line():
    kept, _ = gather_approvals(DEFAULT_SOURCES, "ab" * 20, cli=("alice",), env=(), environ={})
    assert [a.source for a in kept] == ["cli"]
    assert DEFAULT_SOURCES.approval_sources_listed is False
    assert EXPLICIT_CLI.approval_sources_listed is True


def test_under_actions_base_and_head_must_be_the_events(sample, tmp_path):
    repo = sample.repo
    head = commit_on(repo, sample.base, CONFTEST)
    other = commit_on(repo, sample.base, {"minilib/text.py": "# elsewhere\n"})
    event = pull_request_event(tmp_path / "event.json", base=sample.base, head=head)
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event)}
    refuse_refs_other_than_the_event(repo.git, sample.base, head, environ)  # the event's
    with pytest.raises(AndgateError, match="not the pull request event's head"):
        refuse_refs_other_than_the_event(repo.git, sample.base, other, environ)
    with pytest.raises(AndgateError, match="neither the pull request event's base"):
        refuse_refs_other_than_the_event(repo.git, other, head, environ)
    # the event's base may have moved on: its merge-base with head is the base too
    moved = commit_on(repo, sample.base, {"minilib/text.py": "# main moved\n"})
    event = pull_request_event(tmp_path / "event.json", base=moved, head=head)
    refuse_refs_other_than_the_event(repo.git, sample.base, head, environ)
    event.write_text("{not json")
    with pytest.raises(AndgateError, match="cannot read the event"):
        refuse_refs_other_than_the_event(repo.git, sample.base, head, environ)


# -- end to end: `check --approvals github-reviews` against the fake API -------------------


@pytest.mark.slow
def test_a_review_of_an_earlier_commit_counts_after_a_base_merge_until_protected_bytes_change(
    sample, github, tmp_path, monkeypatch
):
    repo = sample.repo
    reviewed = commit_on(repo, sample.base, CONFTEST)
    main = commit_on(repo, sample.base, main_only(repo, sample.base), msg="main")
    head = merge(repo, reviewed, main)
    reviews = [review(90, "alice", "APPROVED", reviewed)]
    github.serve_pull_request(reviews=reviews, commits=[reviewed, head])
    event = pull_request_event(tmp_path / "event.json", base=main, head=head)
    for name, value in actions_environment(github, event).items():
        monkeypatch.setenv(name, value)

    run = sample.gate(head, base=main, approvals="github-reviews")
    assert run.decision == "allow", run.payload["reasons"]
    (approval,) = run.payload["approvals"]
    assert (approval["login"], approval["commit"], approval["review_id"]) == ("alice", reviewed, 90)
    assert len(approval["protected_digest"]) == 64

    changed = commit_on(
        repo, head, {WORKFLOW: "on: pull_request\n", "tests/oracles/locks.sha256": "# hi\n"}
    )
    github.serve_pull_request(reviews=reviews, commits=[reviewed, head, changed])
    pull_request_event(tmp_path / "event.json", base=main, head=changed)
    run = sample.gate(changed, base=main, approvals="github-reviews")
    assert run.decision == "block"
    assert {"ORACLE_AUTHORSHIP", "TRUST_ROOT_CHANGED"} <= set(run.codes)
    assert run.payload["approvals"] == []
    ignored = [w["detail"] for w in run.payload["warnings"] if w["code"] == "APPROVAL_IGNORED"]
    assert any(WORKFLOW in w and "tests/oracles/locks.sha256" in w for w in ignored), ignored
    summary = run.artifact("summary.md")
    assert "## Reviews that no longer count" in summary
    assert f"`{WORKFLOW}`" in summary and "`tests/oracles/locks.sha256`" in summary
    page = run.artifact("report.html")
    assert "Reviews that no longer count" in page and WORKFLOW in page


@pytest.mark.slow
def test_a_workflow_edit_blocks_and_approved_by_counts_under_actions_only_when_base_allows(
    sample, tmp_path, monkeypatch
):
    repo = sample.repo
    workflow = {WORKFLOW: "steps:\n  - run: andgate check --approved-by alice\n"}
    head = commit_on(repo, sample.base, workflow)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    run = sample.gate(head, approved_by=("alice",))
    assert run.decision == "block"
    assert run.details("TRUST_ROOT_CHANGED") == [
        f"{WORKFLOW} changed without owner approval (trust-root-only change)"
    ]
    ignored = [w["detail"] for w in run.payload["warnings"] if w["code"] == "APPROVAL_IGNORED"]
    assert any("lists cli in approvals.sources itself" in w for w in ignored)

    manifest = MANIFEST + "approvals:\n  sources: [cli, github-reviews]\n"
    allowing = commit_on(repo, sample.base, {MANIFEST_PATH: manifest}, who=("alice", "a@x"))
    head = commit_on(repo, allowing, workflow)
    run = sample.gate(head, base=allowing, approved_by=("alice",))
    assert run.decision == "allow", run.payload["reasons"]
    assert [a["source"] for a in run.payload["approvals"]] == ["cli"]
    assert json.dumps(run.payload)  # protected_digest is plain JSON


# -- the same base branch ---------------------------------------------------------------------

HEAD_SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
EARLIER = "aa5a315d61ae9438b18d0000000000000000cafe"


def earlier_review_approvals(github: FakeGitHub, tmp_path, events, status=200):  # type: ignore[no-untyped-def]
    from andgate.trust.github import Binding, review_approvals

    github.serve_pull_request(
        reviews=[review(5, "alice", "APPROVED", EARLIER, "2026-11-25T10:00:00Z")],
        commits=[EARLIER, HEAD_SHA],
        events=events,
    )
    github.serve("/repos/octo-org/tinystats/issues/12/events?per_page=100", events, status=status)
    event = pull_request_event(tmp_path / "event.json", base="0" * 40, head=HEAD_SHA)
    return review_approvals(
        event_path=event,
        token="t",
        api_url=github.url,
        repository="octo-org/tinystats",
        gated_head=HEAD_SHA,
        owners=("alice",),
        timeout=5.0,
        bind=lambda _review: Binding(digest="d" * 64),
    )


def test_an_earlier_commit_review_counts_while_the_base_branch_is_unchanged(github, tmp_path):
    before = [{"event": "base_ref_changed", "created_at": "2026-11-24T09:00:00Z"}]
    found, warnings = earlier_review_approvals(github, tmp_path, before)
    assert [(a.commit, a.on_head, a.protected_digest) for a in found] == [
        (EARLIER, False, "d" * 64)
    ]
    assert warnings == ()


def test_an_earlier_commit_review_given_before_the_base_branch_changed_does_not_count(
    github, tmp_path
):
    after = [{"event": "base_ref_changed", "created_at": "2026-11-26T09:00:00Z"}]
    found, warnings = earlier_review_approvals(github, tmp_path, after)
    assert found == ()
    assert "base branch changed after the review" in warnings[0]
    found, warnings = earlier_review_approvals(github, tmp_path, [], status=500)
    assert found == ()
    assert "base changes cannot be read" in warnings[0]
