"""The verdict in a GitHub Actions job: summary, outputs, annotations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from andgate.report.actions import (
    SUMMARY_LIMIT,
    annotations,
    command,
    escape_data,
    escape_property,
    locate,
    output_lines,
    publish,
    reasons_json,
    stop_commands,
    subject_of,
    truncate_summary,
)

ORACLE = "tests/oracles/test_median.py::TestMedian::test_even[2-4]"
BLOCKED = {
    "schema": "andgate.verdict/1",
    "verdict": "block",
    "reasons": [
        {"code": "UNTRUSTED_FAILED", "detail": "tests/test_agent.py::test_new failed: assert 1"},
        {"code": "TRUST_ROOT_CHANGED", "detail": "tests/conftest.py changed without approval"},
        {"code": "ORACLE_FAILED", "detail": f"{ORACLE} failed: AssertionError: 3 != 2"},
    ],
}
LOCATIONS = {
    ORACLE: ("tests/oracles/test_median.py", 14),
    "tests/conftest.py": ("tests/conftest.py", 1),
}


def parse_github_output(text: str) -> dict[str, str]:
    """Read $GITHUB_OUTPUT as the runner does: `name=value` or `name<<DELIM` ... `DELIM`."""
    values, lines = {}, iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            for inner in lines:
                if inner == delimiter:
                    break
                body.append(inner)
            else:
                raise AssertionError(f"unterminated heredoc for {name}")
            values[name] = "\n".join(body)
        else:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def actions_env(tmp_path: Path) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }


# -- escaping -------------------------------------------------------------------------------


def test_escaping_follows_the_workflow_command_rules():
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("a:b,c") == "a:b,c"


def test_a_test_message_cannot_start_a_workflow_command():
    detail = "tests/oracles/test_x.py::test_y failed: boom\n::set-output name=x::y\r\n::error::z"
    lines = annotations([{"code": "ORACLE_FAILED", "detail": detail}], {})
    assert len(lines) == 1
    line = lines[0]
    assert "\n" not in line and "\r" not in line
    assert line.startswith("::error title=andgate ORACLE_FAILED::")
    assert "boom%0A::set-output name=x::y%0D%0A::error::z" in line
    # what the runner sees, line by line: one command, and it is ours
    assert [ln for ln in "\n".join(lines).splitlines() if ln.startswith("::")] == [line]


def test_properties_are_escaped():
    line = command("error", "m", file="tests/a,b:c.py", line=3, title="x")
    assert line == "::error file=tests/a%2Cb%3Ac.py,line=3,title=x::m"
    assert command("warning", "no props") == "::warning::no props"


# -- annotations ------------------------------------------------------------------------------


def test_annotations_put_the_oracle_first_and_point_at_file_and_line():
    lines = annotations(BLOCKED["reasons"], LOCATIONS)
    assert lines == [
        "::error file=tests/oracles/test_median.py,line=14,title=andgate ORACLE_FAILED::"
        f"{ORACLE} failed: AssertionError: 3 != 2",
        "::error file=tests/conftest.py,line=1,title=andgate TRUST_ROOT_CHANGED::"
        "tests/conftest.py changed without approval",
        "::error title=andgate UNTRUSTED_FAILED::tests/test_agent.py::test_new failed: assert 1",
    ]


def test_a_node_id_falls_back_to_its_files_location():
    reason = {"code": "ORACLE_FAILED", "detail": "tests/o/test_a.py::test_b[1] failed"}
    assert annotations([reason], {"tests/o/test_a.py": ("tests/o/test_a.py", 1)})[0].startswith(
        "::error file=tests/o/test_a.py,line=1,"
    )


def test_an_explicit_subject_wins_over_the_detail():
    reason = {"code": "LOCK_MISMATCH", "detail": "x", "subject": "tests/oracles/fixtures/a.txt"}
    assert subject_of(reason) == "tests/oracles/fixtures/a.txt"
    assert subject_of({"detail": "tests/x.py: not in the lock file"}) == "tests/x.py"
    assert subject_of({}) == ""


def test_at_most_ten_annotations_and_a_count_of_the_rest():
    reasons = [{"code": "UNTRUSTED_FAILED", "detail": f"t{i} failed"} for i in range(14)]
    reasons.append({"code": "ORACLE_FAILED", "detail": "o failed"})
    lines = annotations(reasons, {})
    assert len(lines) == 10
    assert lines[0].endswith("::o failed")
    assert lines[-1] == "::error title=andgate::6 more reasons in the job summary and verdict.json"
    assert len(annotations(reasons[:10], {})) == 10


def test_long_details_are_cut():
    lines = annotations([{"code": "ORACLE_FAILED", "detail": "x" * 50_000}], {})
    assert len(lines[0]) < 1200


# -- publish ----------------------------------------------------------------------------------


def test_publish_outside_actions_does_nothing(tmp_path):
    env = actions_env(tmp_path)
    env["GITHUB_ACTIONS"] = "false"
    assert publish(BLOCKED, "# s\n", tmp_path / "artifacts", 1, env, LOCATIONS) == []
    assert not (tmp_path / "summary").exists()
    assert not (tmp_path / "output").exists()


def test_publish_appends_the_summary_and_writes_the_outputs(tmp_path):
    env = actions_env(tmp_path)
    (tmp_path / "summary").write_text("earlier step\n", encoding="utf-8")
    (tmp_path / "output").write_text("other=1\n", encoding="utf-8")
    artifacts = tmp_path / "odd\npath" / "artifacts"
    lines = publish(BLOCKED, "# andgate: ❌ BLOCK\n", artifacts, 1, env, LOCATIONS)
    assert len(lines) == 3
    assert (tmp_path / "summary").read_text(encoding="utf-8") == (
        "earlier step\n# andgate: ❌ BLOCK\n"
    )
    outputs = parse_github_output((tmp_path / "output").read_text(encoding="utf-8"))
    assert outputs["other"] == "1"
    assert outputs["verdict"] == "block"
    assert outputs["exit-code"] == "1"
    assert outputs["artifacts"] == str(artifacts)
    assert "\n" not in outputs["reasons"]
    assert json.loads(outputs["reasons"]) == [
        {"code": r["code"], "detail": r["detail"]} for r in BLOCKED["reasons"]
    ]


def test_publish_an_allow(tmp_path):
    env = actions_env(tmp_path)
    allowed = {"verdict": "allow", "reasons": []}
    assert publish(allowed, "# ok\n", tmp_path, 0, env, {}) == []
    outputs = parse_github_output((tmp_path / "output").read_text(encoding="utf-8"))
    assert outputs == {
        "verdict": "allow",
        "exit-code": "0",
        "reasons": "[]",
        "artifacts": str(tmp_path),
    }


def test_an_unwritable_output_file_is_a_warning_not_a_crash(tmp_path):
    env = actions_env(tmp_path)
    env["GITHUB_OUTPUT"] = str(tmp_path)  # a directory
    lines = publish(BLOCKED, "# s\n", tmp_path, 1, env, {})
    assert lines[-1].startswith("::warning::andgate could not write $GITHUB_OUTPUT")


def test_the_summary_stays_under_githubs_limit(tmp_path):
    env = actions_env(tmp_path)
    huge = "".join(
        f"- **ORACLE_FAILED**: tests/test_{i}.py::test failed ✗\n" for i in range(60_000)
    )
    assert len(huge.encode()) > 2 * 1024 * 1024
    publish(BLOCKED, huge, tmp_path, 1, env, {})
    written = (tmp_path / "summary").read_bytes()
    assert len(written) <= SUMMARY_LIMIT < 1024 * 1024
    text = written.decode("utf-8")
    assert text.endswith("see summary.md._\n")
    assert "\n- **ORACLE_FAILED**: tests/test_1.py::test failed ✗\n" in text


def test_truncate_summary_keeps_short_text():
    assert truncate_summary("short\n") == "short\n"


def test_reasons_json_is_bounded_and_valid():
    reasons = [{"code": "UNTRUSTED_FAILED", "detail": "x" * 1000} for _ in range(200)]
    text = reasons_json(reasons, limit=10_000)
    assert len(text) <= 10_000
    data = json.loads(text)
    assert data[-1]["code"] == "MORE"
    assert data[-1]["detail"].endswith("more in verdict.json")


def test_output_values_never_end_their_heredoc_early():
    text = output_lines({"reasons": "a\nANDGATE_x\nb", "verdict": "block"})
    assert parse_github_output(text) == {"reasons": "a\nANDGATE_x\nb", "verdict": "block"}


def test_stop_commands_pair():
    start, end = stop_commands()
    token = start.removeprefix("::stop-commands::")
    assert end == f"::{token}::"
    assert len(token) > 20
    assert stop_commands()[0] != start


# -- locations --------------------------------------------------------------------------------

SOURCE = b"""\
import pytest


class TestMedian:
    @pytest.mark.parametrize("xs", [[1, 2]])
    def test_even(self, xs):
        assert True


def test_top():
    pass
"""


@pytest.mark.parametrize(
    ("subject", "where"),
    [
        ("tests/t.py::TestMedian::test_even[xs0]", ("tests/t.py", 6)),
        ("tests/t.py::test_top", ("tests/t.py", 10)),
        ("tests/t.py::TestMedian", ("tests/t.py", 4)),
        ("tests/t.py::test_gone", ("tests/t.py", 1)),
        ("tests/missing.py::test_x", ("tests/missing.py", 1)),
        ("tests/broken.py::test_x", ("tests/broken.py", 1)),
        ("tests/oracles/fixtures/a.txt", ("tests/oracles/fixtures/a.txt", 1)),
    ],
)
def test_locate(subject, where):
    files = {"tests/t.py": SOURCE, "tests/broken.py": b"def (:\n"}
    assert locate(subject, files.get) == where
