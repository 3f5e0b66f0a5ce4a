"""The pytest side: an option, a fixture and a line in the report header."""

import pytest

from pytest_tally.counter import Tally


def pytest_addoption(parser):
    group = parser.getgroup("tally")
    group.addoption(
        "--tally-limit",
        type=int,
        default=None,
        help="fail a test whose tally counts more than N events of one kind",
    )


@pytest.fixture
def tally(request):
    return Tally(limit=request.config.getoption("tally_limit"))


def pytest_report_header(config):
    limit = config.getoption("tally_limit")
    return f"tally: limit {limit}" if limit is not None else None
