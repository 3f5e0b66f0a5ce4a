"""Changes the tests make to their sample project (an agent's commits)."""

from __future__ import annotations

from andgate.commands.sample import SampleRepo

AGENT_SLUG_TEST = '''\
"""Agent-written test (untrusted)."""

from minilib import slugify


def test_slugify_collapses_separators():
    assert slugify("Hello,  World!") == "hello-world"
'''


def honest_fix(repo: SampleRepo) -> None:
    """Collapse separator runs in slugify, with the agent's own test."""
    repo.edit("minilib/text.py", 'r"[^a-z0-9]"', 'r"[^a-z0-9]+"')
    repo.write({"tests/test_slugify_agent.py": AGENT_SLUG_TEST})


def weakened_oracle(repo: SampleRepo) -> None:
    """An oracle assertion weakened to truthiness: kb_chunk_drops_tail then survives."""
    repo.edit(
        "tests/oracles/test_text_oracle.py",
        "assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]",
        "assert chunk([1, 2, 3, 4, 5], 2)",
    )
