"""GitHub Actions: the job summary, step outputs and annotations of a verdict.

Everything a change's tests wrote (node ids, messages) is data to GitHub, never a
command: each annotation is built here, starts with `::error`, and escapes its
message and properties the way the workflow-command syntax requires, so a test
message holding "\\n::set-output ..." stays inside one annotation.
"""

# No `from __future__ import annotations` here: this module's `annotations()` would
# redefine the name, which mypy rejects; every annotation below is valid at run time.
import ast
import json
import os
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

MAX_ANNOTATIONS = 10  # GitHub shows at most ten error (and ten warning) annotations per step
SUMMARY_LIMIT = 900 * 1024  # GitHub refuses a step summary over 1 MiB
REASONS_LIMIT = 64 * 1024
DETAIL_LIMIT = 1000
PLAIN_RE = re.compile(r"[A-Za-z0-9_.-]*")  # values safe in the one-line `name=value` form
# What a reviewer must look at first: a disputed or failing oracle, then who changed
# trust roots.
PRIORITY = (
    "ORACLE_DISPUTED",  # the change's own account of its block leads (contract section 4)
    "ORACLE_FAILED",
    "ORACLE_WEAKENED",  # with block_weakened_oracles: what approving the edit gives up
    "ORACLE_AUTHORSHIP",
    "TRUST_ROOT_CHANGED",
    "PRODUCTION_SUSPICIOUS",
    "ORACLE_NEUTRALIZED",
    "LOCK_MISMATCH",
    "KNOWN_BAD_STALE",
    "NO_ORACLE",
    "NO_KNOWN_BAD",
    "PROPERTY_FAILED",
    "NO_SEEDS",
    "NO_PROPERTY",
    "FREEZE_EXPIRED",
    "FREEZE_INVALID",
    "COLLECTION_ERROR",
    "UNTRUSTED_FAILED",
)


# -- workflow-command syntax ----------------------------------------------------------


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """`::name k=v,k=v::message`, escaped; properties that are None are left out."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def stop_commands() -> tuple[str, str]:
    """The lines around a block of untrusted output (a pytest log) that make the runner
    ignore workflow commands inside it: `::stop-commands::TOKEN` ... `::TOKEN::`."""
    token = f"andgate-{secrets.token_hex(16)}"
    return f"::stop-commands::{token}", f"::{token}::"


# -- annotations ----------------------------------------------------------------------


def _rank(reason: Mapping[str, Any]) -> int:
    code = str(reason.get("code", ""))
    return PRIORITY.index(code) if code in PRIORITY else len(PRIORITY)


def subject_of(reason: Mapping[str, Any]) -> str:
    """The node id or path a reason is about: its `subject`, else its detail's first word
    (details read "tests/oracles/test_x.py::test_y failed: ...")."""
    subject = reason.get("subject")
    if isinstance(subject, str) and subject:
        return subject
    words = str(reason.get("detail", "")).split(maxsplit=1)
    return words[0].rstrip(":") if words else ""


def _where(
    subject: str, locations: Mapping[str, tuple[str, int | None]]
) -> tuple[str | None, int | None]:
    if subject in locations:
        return locations[subject]
    path = subject.split("::", 1)[0]
    if path != subject and path in locations:
        return locations[path]
    return None, None


def annotations(
    reasons: Sequence[Mapping[str, Any]],
    locations: Mapping[str, tuple[str, int | None]],
    limit: int = MAX_ANNOTATIONS,
) -> list[str]:
    """At most `limit` `::error` lines, most important first; with more reasons than
    that, the last line says how many more are in the summary."""
    ordered = sorted(reasons, key=_rank)  # stable: the gate's order within a code
    shown = ordered if len(ordered) <= limit else ordered[: limit - 1]
    lines = []
    for reason in shown:
        code = str(reason.get("code", "andgate"))
        path, line = _where(subject_of(reason), locations)
        detail = str(reason.get("detail", ""))[:DETAIL_LIMIT]
        lines.append(command("error", detail, file=path, line=line, title=f"andgate {code}"))
    if len(ordered) > len(shown):
        more = len(ordered) - len(shown)
        message = f"{more} more reasons in the job summary and verdict.json"
        lines.append(command("error", message, title="andgate"))
    return lines


# Warnings annotated where the reviewer reads the diff: what an approved (or about to be
# approved) edit of oracle items gives up, on the edited test's line.
ANNOTATED_WARNINGS = frozenset({"ORACLE_WEAKENED"})


def warning_annotations(
    warnings: Sequence[Mapping[str, Any]],
    locations: Mapping[str, tuple[str, int | None]],
    limit: int = MAX_ANNOTATIONS,
) -> list[str]:
    """`::warning` lines for the warnings a reviewer must see before approving, at
    most `limit`."""
    chosen = [w for w in warnings if str(w.get("code")) in ANNOTATED_WARNINGS]
    shown = chosen if len(chosen) <= limit else chosen[: limit - 1]
    lines = []
    for warning in shown:
        code = str(warning.get("code"))
        path, line = _where(subject_of(warning), locations)
        detail = str(warning.get("detail", ""))[:DETAIL_LIMIT]
        lines.append(command("warning", detail, file=path, line=line, title=f"andgate {code}"))
    if len(chosen) > len(shown):
        message = f"{len(chosen) - len(shown)} more ORACLE_WEAKENED findings in the job summary"
        lines.append(command("warning", message, title="andgate"))
    return lines


def annotated(verdict_json: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The reasons and warnings that become annotations: what needs a location."""
    warnings = verdict_json.get("warnings") or []
    chosen = [w for w in warnings if str(w.get("code")) in ANNOTATED_WARNINGS]
    return [*(verdict_json.get("reasons") or []), *chosen]


# -- summary and outputs --------------------------------------------------------------


def truncate_summary(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """`text` in at most `limit` UTF-8 bytes, cut at a line, with a note when cut."""
    data = text.encode("utf-8", "backslashreplace")
    if len(data) <= limit:
        return text
    note = "\n\n_… summary truncated to stay under GitHub's limit; see summary.md._\n"
    cut = data[: limit - len(note.encode())].decode("utf-8", "ignore")
    return cut[: cut.rfind("\n") + 1 or len(cut)] + note


def reasons_json(reasons: Sequence[Mapping[str, Any]], limit: int = REASONS_LIMIT) -> str:
    """One-line JSON of the reasons (code, detail), shortened to `limit` bytes by
    dropping reasons from the end and saying how many."""
    items = [{"code": str(r.get("code")), "detail": str(r.get("detail"))} for r in reasons]
    for keep in range(len(items), -1, -1):
        shown = items[:keep]
        if keep < len(items):
            shown.append({"code": "MORE", "detail": f"{len(items) - keep} more in verdict.json"})
        text = json.dumps(shown, ensure_ascii=True, separators=(",", ":"))
        if len(text) <= limit:
            return text
    return "[]"


def output_lines(values: Mapping[str, str]) -> str:
    """`$GITHUB_OUTPUT` text: `name=value` for plain words, else `name<<DELIM` with a
    random delimiter that the value does not contain (it could hold a newline)."""
    out = []
    for name, value in values.items():
        if PLAIN_RE.fullmatch(value):
            out.append(f"{name}={value}\n")
            continue
        delimiter = f"ANDGATE_{secrets.token_hex(16)}"
        while delimiter in value:
            delimiter = f"ANDGATE_{secrets.token_hex(16)}"
        out.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(out)


def _append(path: str, text: str) -> None:
    # never through a symbolic link a test may have put where the runner's file was
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(
        os.open(path, flags, 0o644), "a", encoding="utf-8", errors="backslashreplace"
    ) as stream:
        stream.write(text)


def publish(
    verdict_json: Mapping[str, Any],
    summary_md: str,
    artifacts_dir: Path,
    exit_code: int,
    environ: Mapping[str, str],
    locations: Mapping[str, tuple[str, int | None]],
) -> list[str]:
    """In a GitHub Actions job (GITHUB_ACTIONS=true): append the summary to
    $GITHUB_STEP_SUMMARY, write the step outputs to $GITHUB_OUTPUT, and return the
    annotation lines for the caller to print on stderr. Elsewhere: nothing, [].

    `locations` maps a reason's subject (node id or path) to (repository path, line).
    """
    if environ.get("GITHUB_ACTIONS") != "true":
        return []
    reasons = list(verdict_json.get("reasons") or [])
    lines = annotations(reasons, locations)
    lines += warning_annotations(list(verdict_json.get("warnings") or []), locations)
    targets: tuple[tuple[str, Callable[[], str]], ...] = (
        ("GITHUB_STEP_SUMMARY", lambda: truncate_summary(summary_md)),
        ("GITHUB_OUTPUT", lambda: _outputs(verdict_json, reasons, artifacts_dir, exit_code)),
    )
    for variable, text in targets:
        if environ.get(variable):
            try:
                _append(environ[variable], text())
            except OSError as exc:
                lines.append(command("warning", f"andgate could not write ${variable}: {exc}"))
    return lines


def _outputs(
    verdict_json: Mapping[str, Any],
    reasons: Sequence[Mapping[str, Any]],
    artifacts_dir: Path,
    exit_code: int,
) -> str:
    return output_lines(
        {
            "verdict": str(verdict_json.get("verdict", "block")),
            "exit-code": str(exit_code),
            "reasons": reasons_json(reasons),
            "artifacts": str(artifacts_dir),
        }
    )


# -- where a reason points ----------------------------------------------------------------


def locate(subject: str, read: Callable[[str], bytes | None]) -> tuple[str, int | None]:
    """(path, line) for a node id (the line of its test function, found with ast in
    the file `read(path)` returns) or a path (line 1: a file-level annotation)."""
    path, _, rest = subject.partition("::")
    if not rest:
        return path, 1
    names = [part.split("[", 1)[0] for part in rest.split("::") if part]
    source = read(path)
    if source is None:
        return path, 1
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return path, 1
    return path, _find_def(tree, names) or 1


def _find_def(node: ast.AST, names: Sequence[str]) -> int | None:
    if not names:
        return None
    for child in ast.iter_child_nodes(node):
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if isinstance(child, kinds) and child.name == names[0]:
            return _find_def(child, names[1:]) or child.lineno
    return None
