"""Finding xfail marks and calls in a test module without importing it
(`commands/xfails.py`): what keeps a file out of init's oracle proposal."""

from __future__ import annotations

from andgate.commands.xfails import Xfail, xfails_in

MARKED = b"""\
import pytest
from pytest import mark
from pytest import xfail as expected_failure

pytestmark = [pytest.mark.filterwarnings("error")]


def test_plain():
    assert True


@pytest.mark.xfail
def test_group_chaining(runner):
    assert False


@pytest.mark.xfail(reason="bug 12", strict=True)
def test_strict():
    assert False


@pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.xfail)])
def test_param(x):
    assert x == 1


class TestThings:
    @mark.xfail(raises=ValueError)
    def test_method(self):
        raise ValueError

    def test_imperative(self):
        pytest.xfail("not ready")


def test_imported_call():
    expected_failure("not ready")
"""


def test_every_xfail_mark_and_call_is_found_with_its_line_and_test():
    assert xfails_in(MARKED) == (
        Xfail(12, "test_group_chaining", "marked xfail"),
        Xfail(17, "test_strict", "marked xfail"),
        Xfail(22, "test_param", "marked xfail"),
        Xfail(28, "TestThings.test_method", "marked xfail"),
        Xfail(33, "TestThings.test_imperative", "calls pytest.xfail()"),
        Xfail(37, "test_imported_call", "calls pytest.xfail()"),
    )
    assert Xfail(13, "test_group_chaining", "marked xfail").describe() == (
        "line 13 (test_group_chaining): marked xfail"
    )


def test_a_module_level_xfail_marks_the_whole_file():
    (found,) = xfails_in(b"import pytest\n\npytestmark = pytest.mark.xfail\n")
    assert found == Xfail(3, "", "marked xfail")
    assert found.describe() == "line 3: marked xfail"


def test_no_xfail_a_mention_of_it_or_a_file_that_does_not_parse_is_nothing():
    assert xfails_in(b"def test_a():\n    assert True\n") == ()
    assert xfails_in(b'def test_a():\n    """Not an xfail: the word alone."""\n') == ()
    assert xfails_in(b"xfail = 1\ndef test_a(:\n") == ()
    assert xfails_in(b"import other\n\n@other.xfail\ndef test_a():\n    pass\n") == ()
