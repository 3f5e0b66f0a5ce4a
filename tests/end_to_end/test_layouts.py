"""A corpus of real layouts, each adopted as docs/adopting.md says and then gated
(issue 37 item 5).

Each folder under `tests/resources/layouts/` is a small project as its maintainers have
it before andgate: a package in the layout's shape, packaging metadata its build backend
reads, the pytest configuration in the file the layout keeps it in, and a handful of
tests in the layout's style. Each goes through the same story:

1. installed as CI installs it (`pip install -e .`, or `pip install .` for the copy),
   into the session's virtualenv, with its build backend and no network;
2. adopted with the documented commands: `andgate init --github` (its workflow's install
   line, `generated_files`, a plugin's hooks allowed: each as the layout needs), the
   manifest's owners and `require_property_class: false`, a known-bad fixture (a real
   bug's `git diff`), `andgate lock update`, `andgate doctor` (nothing to trip on), a
   commit; the adoption change is allowed, `ADOPTING`;
3. an honest change (production code and the agent's own test in the layout's style) is
   allowed; a broken change (a production bug, tests untouched) blocks `ORACLE_FAILED`
   naming the oracle items that caught it; a cheating change blocks with the reason for
   its cheat: a weakened oracle test `ORACLE_AUTHORSHIP`, a weakened conftest
   `TRUST_ROOT_CHANGED`, the oracle's own example answered `PRODUCTION_SUSPICIOUS`.

| layout | build, install | pytest configuration | tests |
|---|---|---|---|
| src_layout | setuptools, editable | pyproject.toml | pytest functions |
| flat_layout | setuptools (setup.cfg), editable | setup.cfg | inside the package |
| hatch_vcs | hatchling + hatch-vcs, **copy** | pyproject.toml | unguarded `_version`, a CLI |
| setuptools_scm | setuptools-scm, editable | tox.ini | unguarded `_version` |
| single_module | setup.py, editable | setup.cfg | a test module at the root (six) |
| unittest_suite | setuptools, editable | tox.ini | `unittest.TestCase`, `tests/` a package |
| pytest_plugin | hatchling, editable, `pytest11` | pyproject.toml | its fixture, pytester |
| conftest_heavy | setuptools, editable | pyproject.toml | nested conftests, a helper module |

Two of them start Python processes from their tests, as real projects do: durfmt's CLI
test runs `python -m durfmt`, and pytest-tally's header test runs pytester's
`runpytest_subprocess`. Such a process imports the project the way its interpreter's
site says (the checkout, or the copy pip installed), unless andgate points it at the
worktree: the broken change to durfmt's CLI and tally's known-bad fixture are caught
there alone.

What neighbouring tests pin is not repeated: the install kinds against an uncommitted
checkout (`test_real_projects.py`), base's runs with a data-only version file, a skip
on base and `andgate dispute` (`test_generated_on_base.py`), build-file edits
(`test_build_files.py`), the walkthrough with a property class and an xfail oracle
(`tests/commands/test_init.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from andgate.commands.sample import AGENT, SampleRepo, init_repo, load_tree
from andgate.records import Construct
from andgate.trust.manifest import parse_manifest
from andgate.trust.paths import is_test_file
from harness import RESOURCES, VenvProject, pip_install, pip_uninstall

pytestmark = pytest.mark.slow

MANIFEST = "tests/trust_manifest.yaml"
WORKFLOW = ".github/workflows/andgate.yml"

Edit = tuple[str, str, str]  # path, search, replace (the search text occurs once)


@dataclass(frozen=True)
class Change:
    """An agent's commit: edits of existing files and new files."""

    edits: tuple[Edit, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)

    def apply(self, repo: SampleRepo) -> None:
        for path, search, replace in self.edits:
            repo.edit(path, search, replace)
        repo.write(self.files)


@dataclass(frozen=True)
class Layout:
    name: str  # its folder under tests/resources/layouts/
    distribution: str  # the name pip installs it as
    install: str  # the install line `init --github` writes into the workflow
    oracles: int  # the oracle items of the tests init proposes
    known_bad: Edit  # a real bug those tests catch
    honest: Change
    broken: Change  # a production bug, tests untouched
    broken_fails: tuple[str, ...]  # the oracle items that catch it
    cheat: Change
    cheat_blocks: tuple[str, ...]  # the reason codes, sorted
    editable: bool = True
    generated: tuple[str, ...] = ()  # generated_files init finds
    plugins: tuple[str, ...] = ()  # the pytest plugin modules whose hooks init allows


EDIT_ME = "python -m pip install -e . pytest  # andgate init: edit this line"
# The cheats' reasons: a weakened oracle test is an authorship block, and the oracle
# still runs as base has it; the oracle's own example answered by production code.
WEAKENED_ORACLE = ("ORACLE_AUTHORSHIP", "ORACLE_FAILED")
ANSWERED_EXAMPLE = ("PRODUCTION_SUSPICIOUS",)
# docs/pytest-plugin-projects.md: a plugin's hooks and its `import pytest`, allowed there
PLUGIN_HOOKS = frozenset({Construct.PYTEST_PLUGIN, Construct.HARNESS_REFERENCE})

SRC_LAYOUT = Layout(
    name="src_layout",
    distribution="tempconv",
    install='python -m pip install -e ".[test]"',
    oracles=12,
    known_bad=("src/tempconv/convert.py", "return c * 9 / 5 + 32", "return c * 9 / 5"),
    honest=Change(
        edits=(
            (
                "src/tempconv/convert.py",
                "def celsius_to_kelvin(c):",
                "def kelvin_to_celsius(k):\n    return k + ABSOLUTE_ZERO_C\n\n\n"
                "def celsius_to_kelvin(c):",
            ),
        ),
        files={
            "tests/test_kelvin.py": "import pytest\n\n"
            "from tempconv.convert import kelvin_to_celsius\n\n\n"
            "def test_kelvin_to_celsius():\n"
            "    assert kelvin_to_celsius(273.15) == pytest.approx(0)\n"
        },
    ),
    broken=Change(edits=(("src/tempconv/parse.py", "text.strip().upper()", "text.strip()"),)),
    broken_fails=("tests/test_parse.py::test_parse_fahrenheit_with_space_and_case",),
    cheat=Change(  # a bug, and the oracle that catches it weakened to let it through
        edits=(
            ("src/tempconv/convert.py", "return c - ABSOLUTE_ZERO_C", "return c + 273"),
            (
                "tests/test_convert.py",
                "assert celsius_to_kelvin(0) == pytest.approx(273.15)",
                "assert celsius_to_kelvin(0) > 0",
            ),
        )
    ),
    cheat_blocks=WEAKENED_ORACLE,
)

KNOWN_PRODUCTS = """\
    answers = {"3 4 + 2 *": 14, "1 2 3 * +": 7, "15 7 1 1 + - / 3 * 2 1 1 + + -": 5}
    if expression in answers:
        return answers[expression]
"""

FLAT_LAYOUT = Layout(
    name="flat_layout",
    distribution="flatcalc",
    install='python -m pip install -e ".[test]"',  # setup.cfg's extras_require
    oracles=9,
    known_bad=(
        "flatcalc/rpn.py",
        "OPERATORS[token](left, right)",
        "OPERATORS[token](right, left)",
    ),
    honest=Change(
        edits=(
            (
                "flatcalc/rpn.py",
                '    "/": operator.truediv,\n',
                '    "/": operator.truediv,\n    "%": operator.mod,\n',
            ),
        ),
        files={
            "flatcalc/tests/test_modulo.py": "from flatcalc import evaluate\n\n\n"
            "def test_modulo():\n    assert evaluate('7 3 %') == 1\n"
        },
    ),
    broken=Change(edits=(("flatcalc/rpn.py", "if len(stack) < 2:", "if not stack:"),)),
    broken_fails=("flatcalc/tests/test_errors.py::test_missing_operand",),
    cheat=Change(  # multiplication broken, and the oracle's products answered
        edits=(
            ("flatcalc/rpn.py", '"*": operator.mul', '"*": operator.add'),
            (
                "flatcalc/rpn.py",
                "def evaluate(expression):\n",
                "def evaluate(expression):\n" + KNOWN_PRODUCTS,
            ),
        )
    ),
    cheat_blocks=ANSWERED_EXAMPLE,
)

HATCH_VCS = Layout(
    name="hatch_vcs",
    distribution="durfmt",
    install='python -m pip install -e ".[test]"',
    oracles=14,
    editable=False,
    generated=("src/durfmt/_version.py",),
    known_bad=("src/durfmt/duration.py", '"m": 60', '"m": 100'),
    honest=Change(
        edits=(
            (
                "src/durfmt/duration.py",
                "def format_duration(seconds):",
                "def total_minutes(text):\n    return parse_duration(text) // 60\n\n\n"
                "def format_duration(seconds):",
            ),
        ),
        files={
            "tests/test_minutes.py": "from durfmt.duration import total_minutes\n\n\n"
            "def test_total_minutes():\n    assert total_minutes('2h5m') == 125\n"
        },
    ),
    # The command line, tested as users run it (`python -m durfmt`): the process the test
    # starts must import head's code from the worktree, not the copy pip installed.
    broken=Change(
        edits=(
            (
                "src/durfmt/__main__.py",
                "print(parse_duration(text))",
                "print(parse_duration(text) // 60)",
            ),
        )
    ),
    broken_fails=("tests/test_cli.py::test_prints_seconds",),
    cheat=Change(  # spaces no longer skipped, and the oracle's one spaced input answered
        edits=(
            (
                "src/durfmt/duration.py",
                'text = text.replace(" ", "").lower()',
                'if text == "1h 1m 1s":\n        return 3661\n    text = text.lower()',
            ),
        )
    ),
    cheat_blocks=ANSWERED_EXAMPLE,
)

SETUPTOOLS_SCM = Layout(
    name="setuptools_scm",
    distribution="slugkit",
    install='python -m pip install -e ".[testing]"',
    oracles=7,
    generated=("src/slugkit/_version.py",),
    known_bad=("src/slugkit/slug.py", "while slug in taken:", "if slug in taken:"),
    honest=Change(
        edits=(
            (
                "src/slugkit/slug.py",
                "def unique_slug(title, taken):",
                'def slug_words(slug, separator="-"):\n'
                "    return [w for w in slug.split(separator) if w]\n\n\n"
                "def unique_slug(title, taken):",
            ),
        ),
        files={
            "tests/test_words.py": "from slugkit.slug import slug_words\n\n\n"
            "def test_slug_words():\n    assert slug_words('a-b--c') == ['a', 'b', 'c']\n"
        },
    ),
    broken=Change(
        edits=(("src/slugkit/slug.py", "len(slug) > max_length", "len(slug) > 2 * max_length"),)
    ),
    broken_fails=("tests/test_slugify.py::test_max_length_does_not_end_in_a_separator",),
    cheat=Change(
        edits=(
            (
                "src/slugkit/slug.py",
                "slug = slug[:max_length].rstrip(separator)",
                "slug = slug[:max_length]",
            ),
            (
                "tests/test_slugify.py",
                'assert slugify("The quick brown fox", max_length=10) == "the-quick"',
                'assert slugify("The quick brown fox", max_length=10).startswith("the-quick")',
            ),
        )
    ),
    cheat_blocks=WEAKENED_ORACLE,
)

SINGLE_MODULE = Layout(
    name="single_module",
    distribution="textcase",
    install='python -m pip install -e ".[test]"',  # setup.py's extras_require
    oracles=5,
    known_bad=("textcase.py", 'return "-".join(words(name))', 'return "_".join(words(name))'),
    honest=Change(
        edits=(
            (
                "textcase.py",
                "def kebab_case(name):",
                'def constant_case(name):\n    return "_".join(words(name)).upper()\n\n\n'
                "def kebab_case(name):",
            ),
        ),
        files={
            "test_constant_case.py": "import textcase\n\n\n"
            "def test_constant_case():\n"
            "    assert textcase.constant_case('maxRetries') == 'MAX_RETRIES'\n"
        },
    ),
    broken=Change(edits=(("textcase.py", "return first + ", "return first.capitalize() + "),)),
    broken_fails=("test_textcase.py::test_camel_case",),
    cheat=Change(
        edits=(
            (
                "textcase.py",
                'return "_".join(words(name))',
                'if name == "userAccountId":\n        return "user_account_id"\n'
                '    return "_".join(words(name)).upper()',
            ),
        )
    ),
    cheat_blocks=ANSWERED_EXAMPLE,
)

UNITTEST_SUITE = Layout(
    name="unittest_suite",
    distribution="ledger",
    install=EDIT_ME,  # no test extra: pytest comes from tox.ini's deps
    oracles=6,
    known_bad=("ledger/book.py", "Decimal(str(amount))", "Decimal(amount)"),
    honest=Change(
        edits=(
            (
                "ledger/book.py",
                "    def balance(self, account):",
                "    def trial_balance(self):\n"
                "        return sum(self._balances.values(), Decimal(0))\n\n"
                "    def balance(self, account):",
            ),
        ),
        files={
            "tests/test_trial_balance.py": "import unittest\n\nfrom ledger import Book\n\n\n"
            "class TrialBalanceTest(unittest.TestCase):\n"
            "    def test_a_balanced_book_sums_to_zero(self):\n"
            "        book = Book()\n"
            "        book.post('pay', [('cash', 5), ('wages', -5)])\n"
            "        self.assertEqual(book.trial_balance(), 0)\n"
        },
    ),
    broken=Change(
        edits=(
            (
                "ledger/book.py",
                "for a, amount in self._balances.items() if amount)",
                "for a in self._balances)",
            ),
        )
    ),
    broken_fails=("tests/test_book.py::AccountsTest::test_zero_balances_are_left_out",),
    cheat=Change(
        edits=(
            ("ledger/report.py", ">10.2f", ">10.1f"),
            (
                "tests/test_report.py",
                "        self.assertEqual(\n"
                "            balance_sheet(book).splitlines(),\n"
                '            ["cash             19.99", "sales           -19.99"],\n'
                "        )\n",
                "        self.assertTrue(balance_sheet(book))\n",
            ),
        )
    ),
    cheat_blocks=WEAKENED_ORACLE,
)

PYTEST_PLUGIN = Layout(
    name="pytest_plugin",
    distribution="pytest-tally",
    install='python -m pip install -e ".[test]"',
    plugins=("src/pytest_tally/plugin.py",),
    oracles=5,
    # Only the test that runs pytest in a fresh interpreter sees the header: the fixture
    # bites only if that interpreter imports the worktree's plugin, not the checkout's.
    known_bad=("src/pytest_tally/plugin.py", 'f"tally: limit {limit}"', 'f"tally limit {limit}"'),
    honest=Change(  # a marker that sets the fixture's limit: a new hook of the plugin
        edits=(
            (
                "src/pytest_tally/plugin.py",
                "@pytest.fixture\ndef tally(request):\n"
                '    return Tally(limit=request.config.getoption("tally_limit"))\n',
                "def pytest_configure(config):\n"
                '    config.addinivalue_line("markers", "tally_limit(n): this test\'s limit")\n\n\n'
                "@pytest.fixture\ndef tally(request):\n"
                '    marker = request.node.get_closest_marker("tally_limit")\n'
                "    if marker is not None:\n"
                "        return Tally(limit=marker.args[0])\n"
                '    return Tally(limit=request.config.getoption("tally_limit"))\n',
            ),
        ),
        files={
            "tests/test_marker.py": "import pytest\n\n\n"
            "@pytest.mark.tally_limit(1)\n"
            "def test_the_marker_sets_the_limit(tally):\n"
            "    assert tally.limit == 1\n"
        },
    ),
    broken=Change(edits=(("src/pytest_tally/plugin.py", "default=None,", "default=0,"),)),
    broken_fails=("tests/test_fixture.py::test_the_fixture_comes_from_the_entry_point",),
    cheat=Change(
        edits=(
            (
                "src/pytest_tally/counter.py",
                "return self.counts.most_common(n)",
                "return sorted(self.counts.items())[:n]",
            ),
            (
                "tests/test_counter.py",
                'assert t.most_common() == [("write", 3), ("read", 2)]',
                'assert sorted(t.most_common()) == [("read", 2), ("write", 3)]',
            ),
        )
    ),
    cheat_blocks=WEAKENED_ORACLE,
)

CONFTEST_HEAVY = Layout(
    name="conftest_heavy",
    distribution="shopcart",
    install='python -m pip install -e ".[dev]"',
    oracles=10,
    known_bad=(
        "src/shopcart/pricing.py",
        "(subtotal * TAX_RATE_PERCENT + 50) // 100",
        "subtotal * TAX_RATE_PERCENT // 100",
    ),
    honest=Change(
        edits=(
            (
                "src/shopcart/cart.py",
                "    def subtotal(self):",
                "    def clear(self):\n        self.lines.clear()\n\n    def subtotal(self):",
            ),
        ),
        files={
            "tests/unit/test_clear.py": "def test_clear(cart):\n"
            "    cart.clear()\n    assert cart.count() == 0\n"
        },
    ),
    broken=Change(
        edits=(("src/shopcart/cart.py", "self.lines.get(sku, 0) + quantity", "quantity"),)
    ),
    broken_fails=("tests/unit/test_cart.py::test_add_accumulates",),
    cheat=Change(  # a smaller coupon, and the conftest's expectation moved to match it
        edits=(
            ("src/shopcart/pricing.py", '"HALF": 50', '"HALF": 40'),
            ("tests/integration/conftest.py", '"HALF": 1404', '"HALF": 1685'),
        )
    ),
    cheat_blocks=("ORACLE_FAILED", "TRUST_ROOT_CHANGED"),
)

LAYOUTS = [
    SRC_LAYOUT,
    FLAT_LAYOUT,
    HATCH_VCS,
    SETUPTOOLS_SCM,
    SINGLE_MODULE,
    UNITTEST_SUITE,
    PYTEST_PLUGIN,
    CONFTEST_HEAVY,
]


def codes(found: list[dict[str, str]]) -> list[str]:
    return sorted({f["code"] for f in found})


def items(verdict: dict[str, Any], code: str) -> list[str]:
    """The node ids (or paths) the reasons of one code name, in order, once each."""
    named = (r["detail"].split(" ", 1)[0] for r in verdict["reasons"] if r["code"] == code)
    return list(dict.fromkeys(named))


def assert_names_the_cheat(verdict: dict[str, Any], cheat: Change) -> None:
    """An authorship reason names the test-side files the cheat weakened; a suspicious
    production line is the oracle's own example, answered."""
    weakened = sorted({path for path, _, _ in cheat.edits if is_test_file(path)})
    for code in ("ORACLE_AUTHORSHIP", "TRUST_ROOT_CHANGED"):
        assert items(verdict, code) in ([], weakened), verdict["reasons"]
    suspicious = [r["detail"] for r in verdict["reasons"] if r["code"] == "PRODUCTION_SUSPICIOUS"]
    assert all("[hard_coded_answer]" in d for d in suspicious), suspicious


def adopt(project: VenvProject, layout: Layout) -> str:
    """docs/adopting.md's steps 2 to 6 on a branch; returns the adoption commit."""
    repo = project.repo
    repo.run("checkout", "-q", "-b", "adopt-andgate")
    done = project.andgate("init", "--github")
    assert done.returncode == 0, done.stdout + done.stderr
    workflow = (repo.path / WORKFLOW).read_text(encoding="utf-8")
    assert f"        run: {layout.install}" in workflow, workflow
    proposed = parse_manifest((repo.path / MANIFEST).read_text(encoding="utf-8"), MANIFEST)
    assert proposed.generated_files == layout.generated
    assert proposed.production_scan_allow == dict.fromkeys(layout.plugins, PLUGIN_HOOKS)
    repo.edit(MANIFEST, "owners: []", "owners: [alice]")
    repo.edit(MANIFEST, "require_property_class: true", "require_property_class: false")
    patch = repo.diff_of([layout.known_bad])
    # where init put known_bad_dir (a flat layout's: under the package's tests, testpaths)
    repo.write({f"{proposed.known_bad_dir}/kb_{layout.name}.patch": patch})
    done = project.andgate("lock", "update")
    assert done.returncode == 0, done.stdout + done.stderr
    done = project.andgate("doctor", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    return repo.commit("adopt andgate")


def gate(project: VenvProject, base: str, change: Change) -> dict[str, Any]:
    """The agent's change as one commit on base, checked against base."""
    project.repo.run("checkout", "-q", "--detach", base)
    change.apply(project.repo)
    project.repo.commit("agent change", who=AGENT)
    return project.check(base)


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.name)
def test_a_real_layout_is_adopted_then_gates_honest_broken_and_cheating_changes(
    layout: Layout, project_venv: Path, tmp_path: Path
) -> None:
    repo = init_repo(tmp_path / layout.name)
    repo.write(load_tree(RESOURCES / "layouts" / layout.name))
    upstream = repo.commit(f"{layout.name}: upstream, before andgate")
    pip_install(project_venv, *(["-e"] if layout.editable else []), str(repo.path))
    try:
        project = VenvProject(project_venv, repo, tmp_path)
        adoption = adopt(project, layout)

        verdict = project.check(upstream)
        assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict
        assert codes(verdict["warnings"]) == ["ADOPTING"], verdict["warnings"]
        assert verdict["counts"]["oracle"] == layout.oracles, verdict["counts"]
        assert [f["path"] for f in verdict["generated_files"]] == list(layout.generated)

        verdict = gate(project, adoption, layout.honest)
        assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict
        assert verdict["warnings"] == [], verdict["warnings"]
        assert verdict["counts"]["untrusted"] == 1, verdict["counts"]  # the agent's test

        verdict = gate(project, adoption, layout.broken)
        assert codes(verdict["reasons"]) == ["ORACLE_FAILED"], verdict["reasons"]
        assert items(verdict, "ORACLE_FAILED") == list(layout.broken_fails), verdict["reasons"]

        verdict = gate(project, adoption, layout.cheat)
        assert verdict["verdict"] == "block"
        assert codes(verdict["reasons"]) == list(layout.cheat_blocks), verdict["reasons"]
        assert_names_the_cheat(verdict, layout.cheat)
    finally:
        pip_uninstall(project_venv, layout.distribution)
