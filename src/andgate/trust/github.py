"""Owners' approvals, and the one source of them that a workflow editor cannot forge.

`--approved-by` and `ANDGATE_APPROVED_BY` are whatever the person who edits the CI
workflow says. A pull-request review is a fact GitHub records: who approved, when,
and which commit they looked at. `review_approvals` reads those facts with the job's
read-only token and keeps an approval only when every rule holds; anything it cannot
read or check is a warning and no approval, never an approval.

Only the standard library talks HTTP here (urllib), bounded in pages, bytes and time.
"""

from __future__ import annotations

import functools
import http.client
import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

DEFAULT_API_URL = "https://api.github.com"
PR_EVENTS = ("pull_request", "pull_request_review")
DECISIVE = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
MAX_PAGES = 10  # 1,000 reviews; a PR with more cannot be judged, so nobody approved it
PR_COMMIT_LIMIT = 250  # GitHub lists at most 250 commits of a pull request
MAX_BODY = 8 * 1024 * 1024
SHA_RE = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
NEXT_RE = re.compile(r'<([^<>]+)>\s*;\s*rel="?next"?')


@dataclass(frozen=True)
class Approval:
    """One owner's approval and where it came from (verdict.json `approvals`)."""

    login: str
    source: str  # "cli" | "env" | "github-reviews"
    review_id: int | None = None
    commit: str | None = None
    submitted_at: str | None = None
    url: str | None = None
    # the protected diff this approval covers (protected.py); a review given on an
    # earlier commit of the pull request counts only while it equals head's
    protected_digest: str | None = None
    on_head: bool = True  # False: a review of an earlier commit, bound by its digest

    def to_json(self) -> dict[str, object]:
        return {
            "login": self.login,
            "source": self.source,
            "review_id": self.review_id,
            "commit": self.commit,
            "submitted_at": self.submitted_at,
            "url": self.url,
            "protected_digest": self.protected_digest,
        }


@dataclass(frozen=True)
class Binding:
    """Whether an owner's approving review of an earlier commit still holds for head:
    `digest` when its protected diff equals head's; else the protected files that
    changed since (`changed`) or why that cannot be known (`problem`)."""

    digest: str | None = None
    changed: tuple[str, ...] = ()
    problem: str | None = None


@dataclass(frozen=True)
class IgnoredReview:
    """An owner's approving review of an earlier commit that no longer holds, and the
    protected files that changed since (summary.md and report.html list them)."""

    login: str
    review_id: int | None
    commit: str
    url: str | None
    changed: tuple[str, ...]


# Called with an owner's approving review of an earlier commit (its JSON object).
Binder = Callable[[Mapping[str, Any]], Binding]


class ReviewError(Exception):
    """A one-line reason why no review can count."""


@dataclass(frozen=True)
class PullRequest:
    number: int
    head_sha: str
    author: str


# -- the event file -------------------------------------------------------------------


def read_event(event_path: Path | None, event_name: str | None, gated_head: str) -> PullRequest:
    """The pull request this job runs for; it must be the change being gated."""
    if event_name is not None and event_name not in PR_EVENTS:
        raise ReviewError(f"the workflow event is {event_name!r}, not {' or '.join(PR_EVENTS)}")
    if event_path is None:
        raise ReviewError("GITHUB_EVENT_PATH is not set; run in a pull_request workflow")
    try:
        event = json.loads(event_path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ReviewError(f"cannot read the event file {event_path}: {exc}") from None
    pr = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pr, dict):
        raise ReviewError("the event is not a pull_request or pull_request_review event")
    number = pr.get("number")
    head = _get(pr, "head", "sha")
    author = _get(pr, "user", "login")
    if not isinstance(number, int) or not isinstance(head, str) or not isinstance(author, str):
        raise ReviewError("the event's pull_request lacks number, head.sha or user.login")
    if head.lower() != gated_head.lower():
        raise ReviewError(
            f"the event's head {head[:12]} is not the gated head {gated_head[:12]}; "
            "pass --head ${{ github.event.pull_request.head.sha }}"
        )
    return PullRequest(number, head.lower(), author)


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


# -- HTTP -------------------------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect could carry the token elsewhere: treat it as an error."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


def get_json(url: str, token: str, timeout: float) -> tuple[Any, str | None]:
    """One GET: the decoded JSON and the `rel="next"` URL, or ReviewError."""
    request = urllib.request.Request(url, method="GET")
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("X-GitHub-Api-Version", "2022-11-28")
    request.add_header("User-Agent", "andgate")
    request.add_unredirected_header("Authorization", f"Bearer {token}")
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            body = response.read(MAX_BODY + 1)
            link = response.headers.get("Link")
    except urllib.error.HTTPError as exc:
        raise ReviewError(_http_problem(exc)) from None
    except (OSError, http.client.HTTPException) as exc:
        raise ReviewError(f"GitHub API unreachable ({exc.__class__.__name__}: {exc})") from None
    if len(body) > MAX_BODY:
        raise ReviewError(f"GitHub API answer over {MAX_BODY} bytes")
    try:
        return json.loads(body), next_link(link)
    except ValueError:
        raise ReviewError("GitHub API answered with invalid JSON") from None


def _http_problem(exc: urllib.error.HTTPError) -> str:
    headers: Mapping[str, str] | Message = exc.headers or {}
    if exc.code in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
        reset = headers.get("x-ratelimit-reset", "?")
        return f"GitHub API rate limit exhausted (HTTP {exc.code}; resets at epoch {reset})"
    if exc.code in (403, 429) and headers.get("retry-after"):
        wait = headers["retry-after"]
        return f"GitHub API secondary rate limit (HTTP {exc.code}; retry after {wait} s)"
    if exc.code in (401, 403):
        return f"GitHub API refused the token (HTTP {exc.code}); the job needs pull-requests: read"
    if 300 <= exc.code < 400:
        return f"GitHub API redirected (HTTP {exc.code}); redirects are not followed"
    return f"GitHub API error (HTTP {exc.code} {exc.reason})"


def next_link(header: str | None) -> str | None:
    """The `rel="next"` target of a Link header (RFC 8288), as GitHub paginates."""
    for part in (header or "").split(","):
        match = NEXT_RE.search(part)
        if match:
            return match.group(1).strip()
    return None


def get_pages(url: str, token: str, api_url: str, timeout: float, max_pages: int) -> list[Any]:
    """Every item of a paginated list, following Link headers on the API host only."""
    items: list[Any] = []
    for _ in range(max_pages):
        page, url_next = get_json(url, token, timeout)
        if not isinstance(page, list):
            raise ReviewError(f"GitHub API answered {url} with no list")
        items += page
        if url_next is None:
            return items
        if not url_next.startswith(api_url.rstrip("/") + "/"):
            raise ReviewError(f"GitHub API's next page {url_next} is not on {api_url}")
        url = url_next
    raise ReviewError(f"more than {max_pages} pages at {url}; no review can be trusted")


# -- the rules --------------------------------------------------------------------------


def latest_decisive(reviews: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Each login's last APPROVED, CHANGES_REQUESTED or DISMISSED review (a comment
    changes nothing), by casefolded login. GitHub lists reviews oldest first."""
    latest: dict[str, dict[str, Any]] = {}
    for review in reviews:
        login = _get(review, "user", "login")
        if not isinstance(login, str) or not isinstance(review.get("id"), int):
            continue
        if review.get("state") in DECISIVE:
            latest[login.casefold()] = review
    return latest


def commit_logins(commits: Sequence[Any]) -> set[str]:
    """Casefolded GitHub logins of every author and committer of the PR's commits."""
    logins = set()
    for commit in commits:
        for role in ("author", "committer"):
            login = _get(commit, role, "login")
            if isinstance(login, str):
                logins.add(login.casefold())
    return logins


def judge(
    review: Mapping[str, Any],
    *,
    gated_head: str,
    owners: Mapping[str, str],
    excluded: Mapping[str, str],
    bind: Callable[[Mapping[str, Any]], Binding] | None = None,
) -> Approval | str:
    """An Approval, or the one-line reason this login's latest review does not count.
    `owners` and `excluded` map casefolded logins to what to call them. A review of an
    earlier commit counts only through `bind` (its protected diff equals head's)."""
    login = review["user"]["login"]
    key = login.casefold()
    commit = review.get("commit_id")
    if review.get("state") != "APPROVED":
        return f"{login}'s latest review is {str(review.get('state')).lower()}, not approved"
    if key not in owners:
        return f"{login} approved but is not in the base manifest's owners"
    if key in excluded:
        return f"{login} approved but is {excluded[key]}; nobody approves their own change"
    if not isinstance(commit, str) or not SHA_RE.match(commit.lower()):
        return f"{login}'s approval names no commit; approve again"
    on_head = commit.lower() == gated_head.lower()
    digest = None
    if not on_head:
        shown = f"{login} approved {commit[:12]}, not the gated head {gated_head[:12]}"
        if bind is None:
            return f"{shown}; approve again"
        binding = bind(review)
        if binding.digest is None:
            return f"{shown}, and {_unbound(binding)}; approve again"
        digest = binding.digest
    return Approval(
        login=owners[key],
        source="github-reviews",
        review_id=review["id"],
        commit=commit.lower(),
        submitted_at=_str_or_none(review.get("submitted_at")),
        url=_str_or_none(review.get("html_url")),
        protected_digest=digest,
        on_head=on_head,
    )


def _unbound(binding: Binding) -> str:
    if binding.changed:
        shown = ", ".join(binding.changed[:20])
        more = f" and {len(binding.changed) - 20} more" if len(binding.changed) > 20 else ""
        return f"protected files changed since: {shown}{more}"
    return binding.problem or "its protected files cannot be compared with head's"


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def review_approvals(
    *,
    event_path: Path | None,
    token: str | None,
    api_url: str,
    repository: str,
    gated_head: str,
    owners: Sequence[str],
    timeout: float = 20.0,
    event_name: str | None = None,
    max_pages: int = MAX_PAGES,
    bind: Binder | None = None,
) -> tuple[tuple[Approval, ...], tuple[str, ...]]:
    """Owners' approvals from the pull request's reviews, and why others do not count.

    Never raises: a problem anywhere is a warning and no approval at all.
    `gated_head` is the full SHA andgate gates; `owners` come from base's manifest.
    With `bind`, an owner's approval of an earlier commit of the pull request counts
    when the base branch has not changed since and `bind` finds its protected diff
    equal to head's.
    """
    try:
        pr = _check_inputs(event_path, event_name, token, api_url, repository, gated_head)
        api = api_url.rstrip("/")
        session = _Session(pr, token or "", api, repository, timeout, max_pages)
        approvals, why = _judge_reviews(session, owners, bind)
    except ReviewError as exc:
        approvals, why = (), (f"no approval from pull-request reviews: {exc}",)
    except Exception as exc:  # fail closed: a bug here must never become an approval
        problem = f"{exc.__class__.__name__}: {exc}"
        approvals, why = (), (f"no approval from pull-request reviews: {problem}",)
    return approvals, tuple(" ".join(text.split()) for text in why)


def _check_inputs(
    event_path: Path | None,
    event_name: str | None,
    token: str | None,
    api_url: str,
    repository: str,
    gated_head: str,
) -> PullRequest:
    if not SHA_RE.match(gated_head.lower()):
        raise ReviewError(f"the gated head {gated_head!r} is not a full commit SHA")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository or ""):
        raise ReviewError(f"GITHUB_REPOSITORY {repository!r} is not owner/name")
    pr = read_event(event_path, event_name, gated_head)
    if not token:
        raise ReviewError("GITHUB_TOKEN is not set; pass it to the step (read-only is enough)")
    if not api_url.startswith(("https://", "http://")):
        raise ReviewError(f"GITHUB_API_URL {api_url!r} is not an http(s) URL")
    return pr


@dataclass(frozen=True)
class _Session:
    """One pull request's reads from the API."""

    pr: PullRequest
    token: str
    api: str
    repository: str
    timeout: float
    max_pages: int

    def pages(self, path: str, max_pages: int | None = None) -> list[Any]:
        url = f"{self.api}/repos/{self.repository}/{path}"
        return get_pages(url, self.token, self.api, self.timeout, max_pages or self.max_pages)


def _base_changes(session: _Session) -> list[str]:
    """When the pull request's base branch was changed (ISO times, any order)."""
    events = session.pages(f"issues/{session.pr.number}/events?per_page=100")
    return [
        str(e.get("created_at", ""))
        for e in events
        if isinstance(e, dict) and e.get("event") == "base_ref_changed"
    ]


def _same_base(bind: Binder, session: _Session) -> Binder:
    """`bind`, for a review given while the pull request had its current base branch:
    one given before the base branch changed approved a different change. The events
    are read once, only when some owner's approval is of an earlier commit."""

    @functools.cache
    def base_changes() -> tuple[tuple[str, ...], str | None]:
        try:
            return tuple(_base_changes(session)), None
        except ReviewError as exc:
            return (), f"the pull request's base changes cannot be read ({exc})"

    def bound(review: Mapping[str, Any]) -> Binding:
        times, problem = base_changes()
        if problem is not None:
            return Binding(problem=problem)
        when = str(review.get("submitted_at") or "")
        if not when or any(t >= when for t in times):
            return Binding(problem="the pull request's base branch changed after the review")
        return bind(review)

    return bound


def _judge_reviews(
    session: _Session, owners: Sequence[str], bind: Binder | None
) -> tuple[tuple[Approval, ...], tuple[str, ...]]:
    pr = session.pr
    reviews = session.pages(f"pulls/{pr.number}/reviews?per_page=100")
    commits = session.pages(f"pulls/{pr.number}/commits?per_page=100", 3)
    if len(commits) >= PR_COMMIT_LIMIT:
        raise ReviewError(f"the pull request has {PR_COMMIT_LIMIT}+ commits; authors unknown")
    if not any(
        str(c.get("sha", "")).lower() == pr.head_sha for c in commits if isinstance(c, dict)
    ):
        raise ReviewError("the pull request's commits do not include the gated head; re-run")
    excluded = {login: "a commit author or committer" for login in commit_logins(commits)}
    excluded[pr.author.casefold()] = "the pull request's author"
    owner_names = {o.casefold(): o for o in owners}
    approvals, warnings = [], []
    bound = None if bind is None else _same_base(bind, session)
    for key, review in latest_decisive(reviews).items():
        verdict = judge(
            review, gated_head=pr.head_sha, owners=owner_names, excluded=excluded, bind=bound
        )
        if isinstance(verdict, Approval):
            approvals.append(verdict)
        elif review.get("state") == "APPROVED" or key in owner_names:
            # a non-owner's "changes requested" is not news; an owner's dismissal is
            warnings.append(f"review not counted: {verdict}")
    return tuple(approvals), tuple(warnings)


def approvals_from_environment(
    environ: Mapping[str, str],
    *,
    gated_head: str,
    owners: Sequence[str],
    timeout: float = 20.0,
    bind: Binder | None = None,
) -> tuple[tuple[Approval, ...], tuple[str, ...]]:
    """`review_approvals` with everything read from the Actions environment."""
    event_path = environ.get("GITHUB_EVENT_PATH")
    return review_approvals(
        event_path=Path(event_path) if event_path else None,
        token=environ.get("GITHUB_TOKEN") or None,
        api_url=environ.get("GITHUB_API_URL") or DEFAULT_API_URL,
        repository=environ.get("GITHUB_REPOSITORY", ""),
        gated_head=gated_head,
        owners=owners,
        timeout=timeout,
        event_name=environ.get("GITHUB_EVENT_NAME") or None,
        bind=bind,
    )


# -- which sources count ------------------------------------------------------------------


def names_from_env(value: str | None) -> tuple[str, ...]:
    """ANDGATE_APPROVED_BY=a,b as names."""
    return tuple(dict.fromkeys(n.strip() for n in (value or "").split(",") if n.strip()))


def select_approvals(
    *,
    allowed: Sequence[str],
    owners: Sequence[str],
    cli: Sequence[str] = (),
    env: Sequence[str] = (),
    reviews: Sequence[Approval] = (),
) -> tuple[tuple[Approval, ...], tuple[str, ...]]:
    """The approvals that count under base's `approvals.sources` and `owners`, and an
    APPROVAL_IGNORED text for each one that does not. Reviews come first: they are the
    strongest evidence. One entry per (login, source)."""
    kept: dict[tuple[str, str], Approval] = {}
    warnings: list[str] = []
    offered = [*reviews, *(Approval(n, "cli") for n in cli), *(Approval(n, "env") for n in env)]
    owner_set = set(owners)
    for approval in offered:
        where = _SOURCE_LABEL.get(approval.source, approval.source)
        if approval.source not in allowed:
            warnings.append(
                f"approval by {approval.login} from {where} ignored: the base manifest's "
                f"approvals.sources is [{', '.join(allowed)}]"
            )
        elif approval.login not in owner_set:
            warnings.append(
                f"approval by {approval.login} from {where} ignored: not in the base "
                "manifest's owners"
            )
        else:
            kept.setdefault((approval.login, approval.source), approval)
    return tuple(kept.values()), tuple(dict.fromkeys(warnings))


_SOURCE_LABEL = {
    "cli": "--approved-by",
    "env": "ANDGATE_APPROVED_BY",
    "github-reviews": "a pull-request review",
}


def approved_logins(approvals: Iterable[Approval]) -> tuple[str, ...]:
    """The names for ChangeFacts.approved_by, each once, in order."""
    return tuple(dict.fromkeys(a.login for a in approvals))


def approves_head(approvals: Iterable[Approval]) -> bool:
    """Is some approval of head itself (not only of an earlier commit's protected
    bytes)? Only such an approval lifts PRODUCTION_SUSPICIOUS or an oracle item
    `missing on head`."""
    return any(a.on_head for a in approvals)
