"""A local fake of the GitHub REST API (127.0.0.1, no network) for approval tests.

Routes map a request path (with its query) to a canned answer; `serve_pull_request`
serves what andgate reads of one pull request: its reviews, its commits and its issue
events (where GitHub records `base_ref_changed`).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = "octo-org/tinystats"
NUMBER = 12
TOKEN = "ghs_test-token"


@dataclass
class Route:
    status: int = 200
    body: bytes = b"[]"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class FakeGitHub:
    url: str
    routes: dict[str, Route]
    seen: list[tuple[str, dict[str, str]]]

    def serve(self, path: str, data: Any = None, *, status: int = 200, **kw: Any) -> None:
        body = kw.pop("raw", None)
        if body is None:
            body = json.dumps(data if data is not None else []).encode()
        self.routes[path] = Route(status, body, **kw)

    def paths(self) -> list[str]:
        return [path for path, _ in self.seen]

    def serve_pull_request(
        self,
        *,
        reviews: list[dict[str, Any]],
        commits: list[str],
        author: str = "agent-bot",
        events: list[dict[str, Any]] | None = None,
        repo: str = REPO,
        number: int = NUMBER,
    ) -> None:
        """One pull request's reviews, commits (all by `author`) and issue events."""
        pull = f"/repos/{repo}/pulls/{number}"
        self.serve(f"{pull}/reviews?per_page=100", reviews)
        self.serve(
            f"{pull}/commits?per_page=100",
            [
                {"sha": c, "author": {"login": author}, "committer": {"login": author}}
                for c in commits
            ],
        )
        self.serve(f"/repos/{repo}/issues/{number}/events?per_page=100", events or [])


def start(routes: dict[str, Route], seen: list[tuple[str, dict[str, str]]]):  # type: ignore[no-untyped-def]
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append((self.path, dict(self.headers)))
            route = routes.get(self.path, Route(404, b'{"message": "Not Found"}'))
            time.sleep(route.delay)
            self.send_response(route.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            for name, value in route.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(route.body)))
            self.end_headers()
            with contextlib.suppress(OSError):  # the client gave up (the timeout test)
                self.wfile.write(route.body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@contextlib.contextmanager
def running() -> Iterator[FakeGitHub]:
    """A fake API on 127.0.0.1 for the duration of the block."""
    routes: dict[str, Route] = {}
    seen: list[tuple[str, dict[str, str]]] = []
    server = start(routes, seen)
    try:
        yield FakeGitHub(f"http://127.0.0.1:{server.server_address[1]}", routes, seen)
    finally:
        server.shutdown()
        server.server_close()


def review(
    rid: int, login: str, state: str, commit: str, submitted_at: str = "2026-11-25T10:00:00Z"
) -> dict[str, Any]:
    return {
        "id": rid,
        "user": {"login": login, "type": "User"},
        "state": state,
        "commit_id": commit,
        "submitted_at": submitted_at,
        "html_url": f"https://github.com/{REPO}/pull/{NUMBER}#pullrequestreview-{rid}",
    }


def pull_request_event(
    path: Path, *, base: str, head: str, author: str = "agent-bot", number: int = NUMBER
) -> Path:
    """A `pull_request` event file naming the pull request's base and head."""
    event = {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "user": {"login": author},
            "head": {"sha": head, "ref": "agent-change"},
            "base": {"sha": base, "ref": "main"},
        },
        "repository": {"full_name": REPO},
    }
    path.write_text(json.dumps(event), encoding="utf-8")
    return path


def actions_environment(github: FakeGitHub, event: Path) -> dict[str, str]:
    """What a GitHub Actions job's environment says about the run."""
    return {
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": REPO,
    }
