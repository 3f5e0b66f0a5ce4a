"""Did the pytest configuration change? Answered the way pytest reads its files.

Each example is a way configparser (andgate's former reader) and pytest's iniconfig
disagree, or an honest change that used to be a false block, or hostile input that
must end in a one-line reason. The property test at the end compares andgate's
answer with pytest's own `load_config_dict_from_file` on random ini text.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from _pytest.config.findpaths import load_config_dict_from_file
from hypothesis import event, given, settings
from hypothesis import strategies as st

from andgate.trust import pytest_config
from andgate.trust.paths import pytest_config_change, pytest_config_differs
from andgate.trust.pytest_config import (
    change,
    chosen,
    markers,
    read,
    read_with_fallback,
    read_with_pytest,
    starts_xdist,
    tree_runs_xdist,
)

INI_FILES = {"setup.cfg": "tool:pytest", "tox.ini": "pytest"}
# Every line boundary of str.splitlines that "\n"-splitting parsers do not see.
SEPARATORS = {
    "CR": "\r",
    "VT": "\v",
    "FF": "\f",
    "NEL": "\x85",
    "LS": "\u2028",
    "PS": "\u2029",
}
PLUGIN = "addopts = -p myplugin"


def ini(name: str, body: str) -> bytes:
    return f"[metadata]\nname = x\n[{INI_FILES[name]}]\ntestpaths = tests\n{body}".encode()


@pytest.fixture(params=["pytest", "fallback"])
def reader(request, monkeypatch):
    """Run a test with pytest's own reader, then with andgate's copy of its rules."""
    if request.param == "fallback":
        monkeypatch.setattr(pytest_config, "_pytest_loader", None)
    return request.param


# -- parser differences: each one hid a pytest setting from configparser ----------------


@pytest.mark.parametrize("sep", sorted(SEPARATORS))
@pytest.mark.parametrize("name", sorted(INI_FILES))
def test_a_setting_hidden_behind_a_line_separator_is_seen(name, sep, reader):
    old = ini(name, "")
    new = ini(name, f"norecursedirs = build{SEPARATORS[sep]}{PLUGIN}\n")
    why = pytest_config_change(name, old, new)
    assert why == "pytest settings differ (addopts, norecursedirs)"
    assert pytest_config_differs(name, old, new)


def test_key_case_matters_to_pytest(reader):
    old = ini("setup.cfg", "filterwarnings = error\n")
    new = ini("setup.cfg", "FilterWarnings = error\n")
    assert pytest_config_change("setup.cfg", old, new) == (
        "pytest settings differ (FilterWarnings, filterwarnings)"
    )


def test_a_section_header_is_cut_at_a_comment_character(reader):
    # iniconfig: "[tool:flake8 ; ]" is no header, so the next lines stay in [tool:pytest].
    old = ini("setup.cfg", "")
    new = ini("setup.cfg", f"[tool:flake8 ; ]\n{PLUGIN}\n")
    assert pytest_config_change("setup.cfg", old, new) == (
        "pytest settings differ (addopts, testpaths)"
    )


@pytest.mark.parametrize("header", ["[pytest];x]", "[pytest] # x]", "[pytest]#]"])
def test_a_new_file_whose_pytest_header_carries_a_comment_is_seen(header, reader):
    # configparser reads a section "pytest];x"; pytest reads "[pytest]".
    new = f"[tox]\nenvlist = py\n{header}\n{PLUGIN}\n".encode()
    assert pytest_config_change("tox.ini", None, new) == (
        "pytest would now read it as its config file"
    )


@pytest.mark.parametrize("sep", ["\r", "\f"])
def test_a_new_file_whose_pytest_section_hides_behind_a_separator_is_seen(sep, reader):
    new = f"[tox]\nenvlist = py{sep}[pytest]{sep}{PLUGIN}\n".encode()
    assert pytest_config_change("tox.ini", None, new) == (
        "pytest would now read it as its config file"
    )
    cfg = f"[metadata]\nname = x{sep}[tool:pytest]\n{PLUGIN}\n".encode()
    assert pytest_config_differs("setup.cfg", None, cfg)


# -- honest changes that are not pytest's business --------------------------------------


def test_version_bump_in_a_setup_cfg_with_a_bom_is_not_a_config_change(reader):
    old = b"\xef\xbb\xbf[metadata]\nname = x\nversion = 1.0\n[tool:pytest]\naddopts = -q\n"
    assert not pytest_config_differs("setup.cfg", old, old.replace(b"1.0", b"1.1"))
    assert read("setup.cfg", old).settings == (("addopts", "ini", "-q"),)


def test_a_default_section_added_to_tox_ini_is_not_a_config_change(reader):
    old = b"[tox]\nenvlist = py\n[pytest]\naddopts = -q\n"
    new = b"[DEFAULT]\nbasepython = python3.11\n" + old
    assert not pytest_config_differs("tox.ini", old, new)


def test_packaging_only_pyproject_added_or_deleted_is_not_a_config_change(reader):
    packaging = b'[project]\nname = "x"\nversion = "1"\n\n[tool.ruff]\nline-length = 100\n'
    assert not pytest_config_differs("pyproject.toml", None, packaging)
    assert not pytest_config_differs("pyproject.toml", packaging, None)
    assert not pytest_config_differs("setup.cfg", None, b"[metadata]\nname = x\n")
    assert not pytest_config_differs("tox.ini", b"[tox]\nenvlist = py\n", None)


def test_pytest_only_files_count_byte_for_byte(reader):
    assert pytest_config_change("pytest.ini", b"[pytest]\n", b"[pytest]\n\n") == (
        "pytest.ini changed (pytest reads all of it)"
    )
    assert pytest_config_differs("pkg/.pytest.toml", b"", b"# a comment\n")


def test_pyproject_tables_pytest_and_andgate_compare_by_type(reader):
    old = b"[tool.pytest]\nminversion = 1\n[tool.andgate]\nx = 1\n"
    assert pytest_config_change(
        "pyproject.toml", old, old.replace(b"minversion = 1", b"minversion = true")
    ) == ("pytest settings differ (minversion)")
    assert pytest_config_change("pyproject.toml", old, old.replace(b"x = 1", b"x = 1.0")) == (
        "its [tool.andgate] table differs"
    )


# -- hostile input: a one-line reason, never a traceback --------------------------------

DEEP = b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n"
HOSTILE = {
    "tool = 1": ("pyproject.toml", b"tool = 1\n", "a table pytest expects is not a table"),
    "tool.pytest = 1": (
        "pyproject.toml",
        b"[tool]\npytest = 1\n",
        "a table pytest expects is not a table",
    ),
    "5000-deep arrays": ("pyproject.toml", DEEP, "nested too deeply"),
    "5000-deep in pytest.toml": ("pytest.toml", b"[pytest]\n" + DEEP, "nested too deeply"),
    "2 MiB": (
        "setup.cfg",
        b"[metadata]\ndescription = " + b"x" * (2 << 20) + b"\n",
        "too large to read safely (2097178 bytes, limit 1048576)",
    ),
    "Latin-1": ("setup.cfg", b"[tool:pytest]\naddopts = caf\xe9\n", "not UTF-8 (byte 27"),
    "bad TOML": ("pyproject.toml", b"not toml [", "pyproject.toml: Expected '='"),
    "[pytest] in setup.cfg": ("setup.cfg", b"[pytest]\naddopts = -p x\n", "no longer supported"),
    "duplicate key": ("tox.ini", b"[pytest]\na = 1\na = 2\n", "tox.ini:3: duplicate name 'a'"),
}


@pytest.mark.parametrize("what", sorted(HOSTILE))
def test_hostile_config_is_a_change_with_a_one_line_reason(what, reader):
    name, data, problem = HOSTILE[what]
    for old, new, side in ((None, data, "head"), (data, b"", "base")):
        why = pytest_config_change(name, old, new)
        assert why is not None and why.startswith(f"pytest cannot read it at {side}: ")
        assert problem in why and "\n" not in why and len(why) < 260
        assert "andgate-config-" not in why  # the private temp folder is not named
    assert not pytest_config_differs(name, data, data)  # unchanged bytes: nothing to say


# -- which file pytest picks, testpaths, markers ----------------------------------------


def test_chosen_follows_pytest_9_order(reader):
    cfg, tox = b"[tool:pytest]\n", b"[pytest]\n"
    packaging = b"[project]\n"
    assert chosen({"setup.cfg": cfg, "tox.ini": tox, "pyproject.toml": packaging}) == "tox.ini"
    assert chosen({"setup.cfg": cfg, "pyproject.toml": packaging}) == "setup.cfg"
    assert chosen({"setup.cfg": b"[metadata]\n", "pyproject.toml": packaging}) == "pyproject.toml"
    assert chosen({"pytest.ini": b"", "pytest.toml": b"", "setup.cfg": cfg}) == "pytest.toml"
    assert chosen({"setup.cfg": b"[metadata]\n"}) is None
    assert chosen({"tox.ini": b"[pytest\n", "setup.cfg": cfg}) == "tox.ini"  # pytest stops there


def test_testpaths_and_markers_as_pytest_reads_them(reader):
    ini_text = b"[pytest]\ntestpaths = a\n  b c\nmarkers =\n    slow: slow tests\n    fast\n"
    assert pytest_config.testpaths("pytest.ini", ini_text) == ("a", "b", "c")
    assert markers("pytest.ini", ini_text) == ("slow: slow tests", "fast")
    toml = b'[tool.pytest]\ntestpaths = ["t 1", "t2"]\nmarkers = ["golden: x"]\n'
    assert pytest_config.testpaths("pyproject.toml", toml) == ("t 1", "t2")
    assert markers("pyproject.toml", toml) == ("golden: x",)
    assert pytest_config.testpaths("setup.cfg", b"[metadata]\n") == ()
    with pytest.raises(pytest_config.Unreadable, match=r"tox\.ini:1: unexpected"):
        markers("tox.ini", b"[pytest\n")


def test_pythonpath_as_pytest_reads_it(reader):
    assert pytest_config.pythonpath("pytest.ini", b"[pytest]\npythonpath = tests src\n") == (
        "tests",
        "src",
    )
    toml = b'[tool.pytest.ini_options]\npythonpath = ["tests"]\n'
    assert pytest_config.pythonpath("pyproject.toml", toml) == ("tests",)
    assert pytest_config.tree_pythonpath({"pytest.ini": b"[pytest]\npythonpath = .\n"}) == (".",)
    assert pytest_config.tree_pythonpath({"tox.ini": b"[pytest\n"}) == ()  # unreadable: none


def test_the_fallback_is_used_when_pytest_s_reader_is_missing(monkeypatch):
    assert pytest_config.pytest_reader_available()
    monkeypatch.setattr(pytest_config, "_pytest_loader", lambda a, b: None)  # other signature
    assert not pytest_config.pytest_reader_available()
    assert read("setup.cfg", b"[tool:pytest]\na = 1\n").settings == (("a", "ini", "1"),)


# -- the property: andgate's "changed?" is pytest's "would I read something else?" ------

SECTIONS = [
    "[metadata]",
    "[tool:pytest]",
    "[pytest]",
    "[DEFAULT]",
    "[tox]",
    "[tool:flake8 ; ]",
    "[tool:pytest];x]",
    "[pytest] # c]",
    "[Pytest]",
]
KEYS = ["addopts", "FilterWarnings", "filterwarnings", "testpaths", "version", "name", "x"]
VALUES = ["-q", "-p myplugin", "error", "1", "2", ""]
OTHER_LINES = ["  continued", "# comment", "; comment", "", "key: value"]
ALL_SEPARATORS = ["\n", "\n", "\n", "\r\n", *SEPARATORS.values(), "\x1c"]

setting = st.builds(lambda k, v: f"{k} = {v}", st.sampled_from(KEYS), st.sampled_from(VALUES))
line = st.one_of(setting, setting, setting, st.sampled_from(SECTIONS), st.sampled_from(OTHER_LINES))
piece = st.tuples(line, st.sampled_from(ALL_SEPARATORS))
first = st.tuples(
    st.sampled_from(["[tool:pytest]", "[pytest]", "[metadata]", "[tox]"]), st.just("\n")
)


def _text(bom: bool, parts: list[tuple[str, str]]) -> bytes:
    return ("\ufeff" * bom + "".join(a + b for a, b in parts)).encode()


@st.composite
def two_versions(draw, name: str) -> tuple[bytes | None, bytes | None]:
    """Base, and head as base with a few pieces edited, inserted or deleted."""
    own = f"[{INI_FILES[name]}]"
    first = draw(st.sampled_from([own, own, "[metadata]", "[tox]"]))
    base = [(first, "\n"), *draw(st.lists(piece, max_size=6))]
    head = list(base)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(1, len(head)))
        how = draw(st.sampled_from(["separator", "line", "insert", "delete"]))
        if how == "insert" or at == len(head):
            head.insert(at, draw(piece))
        elif how == "delete":
            del head[at]
        elif how == "separator":
            head[at] = (head[at][0], draw(st.sampled_from(ALL_SEPARATORS)))
        else:
            head[at] = (draw(setting), head[at][1])
    bom_base, bom_head = draw(st.booleans()), draw(st.booleans())
    old = None if draw(st.integers(0, 9)) == 0 else _text(bom_base, base)
    new = None if draw(st.integers(0, 9)) == 0 else _text(bom_head, head)
    return old, new


def pytest_s_own_reading(folder: Path, name: str, data: bytes | None) -> object:
    """The oracle: pytest's function on a real file; any exception is 'cannot read'."""
    if data is None:
        return None
    path = folder / name
    path.write_bytes(data)
    try:
        return load_config_dict_from_file(path)
    except (Exception, pytest.fail.Exception) as exc:
        return ("cannot read", type(exc))


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(INI_FILES)), data=st.data())
def test_changed_is_exactly_what_pytest_s_own_reader_tells_apart(name, data):
    old, new = data.draw(two_versions(name))
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        before = pytest_s_own_reading(Path(a), name, old)
        after = pytest_s_own_reading(Path(b), name, new)
    unreadable = any(isinstance(r, tuple) for r in (before, after))
    pytest_sees_a_change = old != new and (unreadable or before != after)
    event("unreadable" if unreadable else f"pytest sees a change: {pytest_sees_a_change}")
    assert pytest_config_differs(name, old, new) == pytest_sees_a_change
    assert (change(name, old, new, read_with_fallback) is not None) == pytest_sees_a_change
    for version in (old, new):
        ours, theirs = read_with_fallback(name, version), read_with_pytest(name, version)
        assert ours.same_as(theirs) and (ours.problem is None) == (theirs.problem is None)


@pytest.mark.parametrize(
    ("args", "starts"),
    [
        (["-n", "2"], True),
        (["-nauto"], True),
        (["-n=3"], True),
        (["--numprocesses=4"], True),
        (["--numprocesses", "auto"], True),
        (["--tx", "popen"], True),
        (["-n", "0"], False),
        (["-n0"], False),
        (["--numprocesses=0"], False),
        (["-q", "--strict-markers"], False),
        (["-n"], False),
        ([], False),
        (["-n", "2", "-n", "0"], False),  # the last one wins, as in argparse
        (["-n0", "--numprocesses=2"], True),
    ],
)
def test_starts_xdist_reads_the_options_xdist_reads(args, starts):
    assert starts_xdist(args) is starts


def test_a_tree_runs_xdist_by_its_config_file_or_pytest_addopts():
    ini = {"pytest.ini": b"[pytest]\naddopts = -q -n 2\n"}
    toml = {"pyproject.toml": b'[tool.pytest.ini_options]\naddopts = ["-n", "auto"]\n'}
    assert tree_runs_xdist(ini) and tree_runs_xdist(toml)
    assert not tree_runs_xdist({"pytest.ini": b"[pytest]\naddopts = -q\n"})
    assert tree_runs_xdist({"pytest.ini": b"[pytest]\n"}, "-n 2")
    assert not tree_runs_xdist({"pytest.ini": b"[pytest]\naddopts = -n '2\n"})  # unbalanced
    assert not tree_runs_xdist({})
