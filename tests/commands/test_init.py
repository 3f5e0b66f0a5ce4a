"""`andgate init`, and adopting andgate in an existing project.

init scaffolds the trust files without ever overwriting one, and suggests
globs and markers for the tests a project already has. The last test is the
adoption walkthrough of the README, end to end: init in a fresh clone of a
project with a pytest suite, glob one existing test file into the oracle class,
add a known-bad fixture and a property test, commit; then an honest change
passes `andgate check --base HEAD~1`.
"""

from __future__ import annotations

import json

import pytest

from andgate.commands.cli import main
from andgate.commands.init import run_init
from andgate.commands.sample import AGENT, SampleRepo
from andgate.plugin.classify import accepted_invariants
from andgate.records import Construct
from andgate.trust.freeze import parse_freezes
from andgate.trust.manifest import parse_manifest

MANIFEST = "tests/trust_manifest.yaml"
SCAFFOLD = (
    MANIFEST,
    "tests/oracles/README.md",
    "tests/oracles/known_bad/README.md",
    "tests/properties/INVARIANTS.md",
    "tests/flakes/freeze.yaml",
    "tests/oracles/locks.sha256",
)


def read(repo: SampleRepo, rel: str) -> str:
    return (repo.path / rel).read_text(encoding="utf-8")


def test_scaffolds_every_file_with_strict_defaults(make_repo, capsys):
    repo = make_repo({"README.md": "a project\n"})
    assert run_init(repo.path) == 0
    out = capsys.readouterr().out
    assert [line.split()[-1] for line in out.splitlines() if "  created  " in line] == list(
        SCAFFOLD
    )
    manifest = parse_manifest(read(repo, MANIFEST), MANIFEST)
    assert manifest.oracle.globs == ("tests/oracles/**/*.py",)
    assert manifest.oracle.require_human_owner and manifest.property.require_accepted_invariant
    assert manifest.fail_closed_untrusted and manifest.oracle_must_fail_known_bad
    assert manifest.require_property_class and manifest.max_freeze_days == 28
    assert (manifest.known_bad_dir, manifest.lock_file, manifest.fixtures_dir) == (
        "tests/oracles/known_bad",
        "tests/oracles/locks.sha256",
        "tests/oracles/fixtures",
    )
    assert manifest.frozen_flake.globs == ("tests/**/*.py",)
    comments = [line for line in read(repo, MANIFEST).splitlines() if line.lstrip().startswith("#")]
    assert len(comments) > 25  # every key is explained
    assert accepted_invariants(read(repo, "tests/properties/INVARIANTS.md")) == frozenset()
    freezes = parse_freezes(read(repo, "tests/flakes/freeze.yaml"), "f", 28)
    assert (freezes.valid, freezes.invalid) == ((), ())
    assert read(repo, "tests/oracles/locks.sha256") == ""
    known_bad = read(repo, "tests/oracles/known_bad/README.md")
    assert "git diff -- mypkg/core.py > tests/oracles/known_bad/kb_short_name.patch" in known_bad
    assert "andgate replay-known-bad" in known_bad


def test_never_overwrites_and_reports_what_it_skipped(make_repo, capsys, fingerprint):
    own = "# ours\nfreezes: []\n"
    repo = make_repo({"tests/flakes/freeze.yaml": own})
    assert main(["init", "--repo", str(repo.path)]) == 0
    out = capsys.readouterr().out
    assert "  skipped  tests/flakes/freeze.yaml (exists; not overwritten)" in out
    steps = [line for line in out.splitlines() if line[:5].strip().rstrip(".").isdigit()]
    assert [s.split(".")[0].strip() for s in steps] == [str(i) for i in range(1, 8)]
    assert "NO_KNOWN_BAD" in out and "andgate known-bad mutants --write 3" in out
    assert "NO_PROPERTY" in out and "require_property_class: false" in out
    assert read(repo, "tests/flakes/freeze.yaml") == own
    before = fingerprint(repo.path)
    assert main(["init", "--repo", str(repo.path)]) == 0
    assert capsys.readouterr().out.count("(exists; not overwritten)") == len(SCAFFOLD)
    assert fingerprint(repo.path) == before


def test_an_existing_manifest_decides_where_the_other_files_go(make_repo, capsys):
    manifest = (
        "version: 1\nclasses:\n  oracle:\n    globs: [qa/oracle/*.py]\n"
        "  property:\n    invariants_file: qa/INVARIANTS.md\n"
        "  frozen_flake:\n    freeze_file: qa/freeze.yaml\n"
        "known_bad_dir: qa/oracle/bugs\nlock_file: qa/fixtures.sha256\n"
    )
    repo = make_repo({"qa/manifest.yaml": manifest})
    assert run_init(repo.path, manifest="qa/manifest.yaml") == 0
    for rel in (
        "qa/INVARIANTS.md",
        "qa/freeze.yaml",
        "qa/oracle/bugs/README.md",
        "qa/fixtures.sha256",
        "qa/oracle/README.md",
    ):
        assert (repo.path / rel).is_file(), rel
    assert not (repo.path / "tests").exists()
    assert read(repo, "qa/manifest.yaml") == manifest


def test_suggests_existing_test_folders_and_markers(make_repo, capsys):
    repo = make_repo(
        {
            "tests/unit/test_a.py": "",
            "tests/unit/deep/test_b.py": "",
            "tests/property_based/test_p.py": "",
            "src/pkg/tests/test_c.py": "",
            "tests/helpers.py": "",
            "pyproject.toml": '[tool.pytest.ini_options]\nmarkers = ["golden: recorded outputs",'
            ' "flaky(reruns): retried"]\n',
            "setup.cfg": "[tool:pytest]\nmarkers =\n    slow: slow tests\n    hypothesis_heavy\n",
            "tox.ini": "[pytest\n",
        }
    )
    assert run_init(repo.path) == 0
    out = capsys.readouterr().out
    assert "test folders found" in out and "tests/unit (2)" in out
    assert "pytest markers found: flaky, golden, hypothesis_heavy, slow" in out
    assert "could not read tox.ini" in out
    text = read(repo, MANIFEST)
    assert '    #   globs: ["tests/unit/**/*.py"]            # 2 test files\n' in text
    assert '    #   globs: ["src/pkg/tests/**/*.py"]' in text
    assert "e.g.:  markers: [golden]" in text
    assert "    #   markers: [hypothesis_heavy]\n" in text  # under property
    assert "Flaky-test markers found: flaky." in text
    manifest = parse_manifest(text, MANIFEST)
    assert manifest.frozen_flake.globs == ("src/**/*.py", "tests/**/*.py")
    assert manifest.oracle.globs[0] == "tests/oracles/**/*.py"  # and the tests found
    # A suggestion, uncommented, gives a valid manifest: adoption without moving files.
    proposed = next(line for line in text.splitlines() if line.startswith("    globs: "))
    adopted = text.replace(proposed, '    globs: ["tests/unit/**/*.py"]')
    assert parse_manifest(adopted, MANIFEST).oracle.globs == ("tests/unit/**/*.py",)


def test_errors_are_one_line_and_exit_2(tmp_path, make_repo, capsys):
    assert main(["init", "--repo", str(tmp_path)]) == 2
    assert "not a git repository" in capsys.readouterr().err
    repo = make_repo({"tests/flakes": "a file where a folder belongs\n"})
    assert main(["init", "--repo", str(repo.path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("andgate: tests/flakes/freeze.yaml: cannot create it")
    assert err.count("\n") == 1


# -- the adoption walkthrough ---------------------------------------------------------------

CORE_PY = '''\
"""tinystats: a few statistics helpers."""


def parse_numbers(text):
    """Numbers from a comma-separated string; blank items are skipped."""
    return [float(part) for part in text.split(",") if part.strip()]


def median(xs):
    """The middle value; the mean of the two middle values for an even count."""
    xs = sorted(xs)
    if not xs:
        raise ValueError("median of an empty sequence")
    mid = len(xs) // 2
    if len(xs) % 2:
        return xs[mid]
    return (xs[mid - 1] + xs[mid]) / 2


def spread(xs):
    """max - min of a non-empty sequence."""
    return max(xs) - min(xs)
'''

TEST_CORE = """\
import pytest

from tinystats.core import median, parse_numbers


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5


def test_median_empty():
    with pytest.raises(ValueError):
        median([])


def test_parse_skips_blanks():
    assert parse_numbers("1, ,2") == [1.0, 2.0]
"""

TEST_SPREAD = """\
from tinystats.core import spread


def test_spread():
    assert spread([5, 1, 3]) == 4
"""

INVARIANT = "median(xs) lies between min(xs) and max(xs)"
PROPERTY_TEST = f"""\
import random

import pytest

from tinystats.core import median

# INVARIANT: {INVARIANT}
SEEDS = [11, 12, 13]


@pytest.mark.parametrize("seed", SEEDS)
def test_median_is_between_extremes(seed):
    rng = random.Random(seed)
    for _ in range(50):
        xs = [rng.uniform(-100, 100) for _ in range(rng.randint(1, 9))]
        assert min(xs) <= median(xs) <= max(xs)
"""

AGENT_TEST = """\
from tinystats.core import parse_numbers


def test_parse_accepts_semicolons():
    assert parse_numbers("1;2, 3") == [1.0, 2.0, 3.0]
"""


def upstream_project(make_repo) -> SampleRepo:
    """A small project with an ordinary pytest suite and no andgate files."""
    return make_repo(
        {
            ".gitignore": "__pycache__/\nartifacts/\n",
            "pytest.ini": "[pytest]\ntestpaths = tests\nmarkers =\n    slow: slow tests\n",
            "tinystats/__init__.py": "",
            "tinystats/core.py": CORE_PY,
            "tests/test_core.py": TEST_CORE,
            "tests/test_spread.py": TEST_SPREAD,
        }
    )


def test_adoption_walkthrough_allows_an_honest_change(make_repo, tmp_path, capsys):
    upstream = upstream_project(make_repo)
    upstream.run("clone", "-q", str(upstream.path), str(tmp_path / "clone"))
    repo = SampleRepo(tmp_path / "clone")
    cli = ["--repo", str(repo.path)]

    # 1. Scaffold: the existing tests are proposed as the oracle class.
    assert main(["init", *cli]) == 0
    # the property folder init writes is left out of the folder glob (oracle comes first)
    assert '#   globs: ["tests/**/*.py", "!tests/properties/**"]' in read(repo, MANIFEST)
    proposed = '    globs: ["tests/oracles/**/*.py", "tests/test_core.py", "tests/test_spread.py"]'
    assert proposed in read(repo, MANIFEST)
    repo.edit(MANIFEST, proposed, proposed.replace(', "tests/test_spread.py"', ""))
    repo.edit(MANIFEST, "owners: []", "owners: [alice]")

    # 2. A known-bad fixture: a real `git diff` of a production bug.
    bug = repo.diff_of([("tinystats/core.py", "(xs[mid - 1] + xs[mid]) / 2", "xs[mid]")])
    repo.write({"tests/oracles/known_bad/kb_median_even_count.patch": bug})

    # 3. A property test whose invariant an owner accepted.
    repo.write({"tests/properties/test_median_property.py": PROPERTY_TEST})
    invariants = read(repo, "tests/properties/INVARIANTS.md") + f"- {INVARIANT}\n"
    repo.write({"tests/properties/INVARIANTS.md": invariants})

    # 4. Lock the (empty) fixtures, commit the trust overlay as the base.
    assert main(["lock", "update", *cli]) == 0
    assert main(["lock", "verify", *cli]) == 0
    repo.commit("adopt andgate (owner: alice)")
    capsys.readouterr()
    assert main(["classify", *cli, "--json"]) == 0
    inventory = json.loads(capsys.readouterr().out)
    assert inventory["counts"] == {"oracle": 4, "property": 3, "frozen_flake": 0, "untrusted": 1}

    # 5. An honest change by an agent: a production fix and its own test.
    repo.edit("tinystats/core.py", 'text.split(",")', 'text.replace(";", ",").split(",")')
    repo.write({"tests/test_parse_agent.py": AGENT_TEST})
    repo.commit("parse_numbers accepts semicolons", who=AGENT)
    artifacts = tmp_path / "artifacts"
    code = main(["check", "--base", "HEAD~1", *cli, "--artifacts", str(artifacts), "--jobs", "2"])
    verdict = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
    assert (code, verdict["verdict"], verdict["reasons"]) == (0, "allow", [])
    assert verdict["counts"] == {"oracle": 4, "property": 3, "frozen_flake": 0, "untrusted": 2}
    known_bad = json.loads((artifacts / "known_bad.json").read_text(encoding="utf-8"))
    assert [(f["name"], f["bites"]) for f in known_bad["fixtures"]] == [
        ("kb_median_even_count", True)
    ]
    assert repo.run("status", "--porcelain") == ""


GENERATING_BACKENDS = {
    "setuptools-scm": '[tool.setuptools_scm]\nversion_file = "src/pkg/_version.py"\n',
    "setuptools-scm write_to": '[tool.setuptools_scm]\nwrite_to = "src/pkg/_version.py"\n',
    "hatch-vcs": '[tool.hatch.build.hooks.vcs]\nversion-file = "src/pkg/_version.py"\n',
}


@pytest.mark.parametrize("backend", GENERATING_BACKENDS)
def test_fills_generated_files_from_the_version_generating_backend(make_repo, capsys, backend):
    pyproject = '[project]\nname = "pkg"\ndynamic = ["version"]\n' + GENERATING_BACKENDS[backend]
    repo = make_repo({"pyproject.toml": pyproject, "src/pkg/__init__.py": ""})
    assert run_init(repo.path) == 0
    assert "generated files (generated_files): src/pkg/_version.py" in capsys.readouterr().out
    manifest = parse_manifest(read(repo, MANIFEST), MANIFEST)
    assert manifest.generated_files == ("src/pkg/_version.py",)


def test_the_top_folder_is_proposed_by_its_test_modules_never_every_python_file(make_repo):
    """six's shape, a test module beside the module it tests: the top folder's glob is
    its test modules. "*.py" (gitignore: every Python file, at any depth) would make
    the production module an oracle file, and every change to it ORACLE_AUTHORSHIP."""
    few = make_repo({"sixlike.py": "", "test_sixlike.py": "", "setup.py": ""})
    assert run_init(few.path) == 0
    text = read(few, MANIFEST)
    # and without init's own property folder, whose test modules the top glob would match
    assert (
        '    #   globs: ["test_*.py", "*_test.py", "!tests/properties/**"]  # 1 test file\n' in text
    )
    assert parse_manifest(text, MANIFEST).oracle.globs == (
        "tests/oracles/**/*.py",
        "test_sixlike.py",
    )
    many = make_repo({f"test_{i}.py": "" for i in range(41)} | {"mod.py": "", "pkg/x_test.py": ""})
    assert run_init(many.path) == 0
    globs = parse_manifest(read(many, MANIFEST), MANIFEST).oracle.globs
    assert globs == ("tests/oracles/**/*.py", "test_*.py", "*_test.py", "!tests/properties/**")
    from andgate.trust.paths import matches

    assert matches("test_40.py", globs) and matches("pkg/x_test.py", globs)
    assert not matches("mod.py", globs)


def test_proposes_the_existing_tests_as_oracle_files_and_many_by_folder(make_repo):
    few = make_repo({"tests/test_a.py": "", "tests/unit/test_b.py": "", "src/m.py": ""})
    assert run_init(few.path) == 0
    globs = parse_manifest(read(few, MANIFEST), MANIFEST).oracle.globs
    assert globs == ("tests/oracles/**/*.py", "tests/test_a.py", "tests/unit/test_b.py")
    # A virtualenv inside the checkout that .gitignore does not name holds no test of ours.
    venv = {".venv/pyvenv.cfg": "", ".venv/lib/python3/site-packages/x/tests/test_y.py": ""}
    many = make_repo({f"tests/unit/test_{i}.py": "" for i in range(41)} | {"it/test_x.py": ""})
    many.write(venv | {"env2/pyvenv.cfg": "", "env2/bin/test_z.py": ""})
    assert run_init(many.path) == 0
    globs = parse_manifest(read(many, MANIFEST), MANIFEST).oracle.globs
    assert globs == ("tests/oracles/**/*.py", "it/**/*.py", "tests/unit/**/*.py")


# click's shape: a conftest fixture, the pytest configuration in pyproject.toml, and
# one non-strict xfail item in a file of otherwise ordinary tests.
CLICKLIKE_PYPROJECT = """\
[project]
name = "clicky"
version = "0.1"

[tool.pytest.ini_options]
testpaths = ["tests"]
filterwarnings = ["error"]
markers = ["stress: high-iteration stress tests"]
addopts = "-m 'not stress'"
"""
CLICKLIKE_CONFTEST = """\
import pytest

from clicky import Runner


@pytest.fixture
def runner():
    return Runner()
"""
CLICKLIKE_CORE = """\
class Runner:
    def invoke(self, words):
        return " ".join(words)
"""
CLICKLIKE_BASIC = """\
def test_invoke(runner):
    assert runner.invoke(["a", "b"]) == "a b"


def test_invoke_nothing(runner):
    assert runner.invoke([]) == ""
"""
CLICKLIKE_CHAIN = """\
import pytest


def test_chain(runner):
    assert runner.invoke(["x"]) == "x"


@pytest.mark.xfail
def test_group_chaining(runner):
    assert runner.invoke(["l1a", "l2a"]) == "l1a\\nl2a"
"""


def clicklike(make_repo) -> SampleRepo:
    return make_repo(
        {
            ".gitignore": "__pycache__/\nartifacts/\n",
            "pyproject.toml": CLICKLIKE_PYPROJECT,
            "clicky/__init__.py": "from clicky.core import Runner\n",
            "clicky/core.py": CLICKLIKE_CORE,
            "tests/conftest.py": CLICKLIKE_CONFTEST,
            "tests/test_basic.py": CLICKLIKE_BASIC,
            "tests/test_chain.py": CLICKLIKE_CHAIN,
        }
    )


def test_a_test_file_with_an_xfail_item_is_not_proposed_and_init_says_why(make_repo, capsys):
    repo = clicklike(make_repo)
    assert run_init(repo.path) == 0
    out = capsys.readouterr().out
    manifest = read(repo, MANIFEST)
    globs = parse_manifest(manifest, MANIFEST).oracle.globs
    assert globs == ("tests/oracles/**/*.py", "tests/test_basic.py")
    assert "    #   tests/test_chain.py: line 8 (test_group_chaining): marked xfail\n" in manifest
    assert "    # Not proposed: an oracle item that xfails never passes" in manifest
    assert (
        "not proposed as oracles, 1 test file with xfail items: an oracle item that xfails "
        "never passes (xfailed and xpassed both fail it), so every check would block with "
        "ORACLE_FAILED\n  tests/test_chain.py: line 8 (test_group_chaining): marked xfail\n"
        "  to make one an oracle: fix the code or the test and drop the xfail, or move the "
        "xfail test into a file that is not an oracle, then add it to classes.oracle.globs\n"
    ) in out


def test_proposed_by_folder_a_file_with_an_xfail_item_is_left_out_by_a_negated_glob(make_repo):
    files = {f"tests/unit/test_{i}.py": "def test_a():\n    pass\n" for i in range(42)}
    files["tests/unit/test_7.py"] = "import pytest\n\n@pytest.mark.xfail\ndef test_a():\n    x\n"
    repo = make_repo(files)
    assert run_init(repo.path) == 0
    manifest = parse_manifest(read(repo, MANIFEST), MANIFEST)
    assert manifest.oracle.globs == (
        "tests/oracles/**/*.py",
        "tests/unit/**/*.py",
        "!tests/unit/test_7.py",
    )
    from andgate.trust.paths import matches

    assert matches("tests/unit/test_6.py", manifest.oracle.globs)
    assert not matches("tests/unit/test_7.py", manifest.oracle.globs)


def test_adopting_with_inits_proposal_is_allowed_and_doctor_names_an_xfail_oracle(
    make_repo, tmp_path, capsys
):
    """click, adopted with init's proposal: the adoption change is allowed (ADOPTING),
    the xfail item stays untrusted and the file without one is the oracle. Put the
    xfail file into the globs and doctor names its item and the fix, and the check
    blocks: the contract's rule stands, an oracle item that xfails does not pass."""
    repo = clicklike(make_repo)
    cli = ["--repo", str(repo.path)]
    upstream = repo.run("rev-parse", "HEAD")
    assert main(["init", *cli]) == 0
    repo.edit(MANIFEST, "owners: []", "owners: [alice]")
    repo.edit(MANIFEST, "require_property_class: true", "require_property_class: false")
    bug = repo.diff_of([("clicky/core.py", '" ".join(words)', '"".join(words)')])
    repo.write({"tests/oracles/known_bad/kb_join.patch": bug})
    assert main(["lock", "update", *cli]) == 0
    repo.commit("adopt andgate")
    artifacts = tmp_path / "artifacts"
    check = ["check", "--base", upstream, *cli, "--artifacts", str(artifacts), "--jobs", "2"]
    capsys.readouterr()
    assert main(check) == 0, capsys.readouterr().err
    verdict = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["reasons"] == []
    assert [w["code"] for w in verdict["warnings"]] == ["ADOPTING"]
    assert verdict["counts"] == {"oracle": 2, "property": 0, "frozen_flake": 0, "untrusted": 2}

    proposed = '"tests/test_basic.py"]'
    repo.edit(MANIFEST, proposed, '"tests/test_basic.py", "tests/test_chain.py"]')
    capsys.readouterr()
    assert main(["doctor", *cli, "--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert (
        "ORACLE_FAILED: tests/test_chain.py: 1 oracle item marked xfail, "
        "tests/test_chain.py::test_group_chaining: an oracle item that xfails never passes"
    ) in out
    assert "fix: take tests/test_chain.py out of classes.oracle.globs" in out
    assert out.count("test_group_chaining") == 1, out  # the baseline does not name it again
    repo.commit("the xfail file as an oracle too")
    capsys.readouterr()
    assert main([*check[:2], upstream, *check[3:]]) == 1
    verdict = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["reasons"] == [
        {"code": "ORACLE_FAILED", "detail": "tests/test_chain.py::test_group_chaining xfailed"}
    ]


INSTALLS = {
    "extra": (
        {"pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\n'
         'docs = ["x"]\ntests = ["pytest"]\n'},
        'python -m pip install -e ".[tests]"',
    ),
    "setup.cfg extra": (
        {"setup.cfg": "[metadata]\nname = p\n\n[options.extras_require]\ntesting =\n    pytest\n"},
        'python -m pip install -e ".[testing]"',
    ),
    "setup.py extra": (
        {"setup.py": "from setuptools import setup\n\nEXTRAS = {'doc': ['x'], 'test': ['y']}\n"
         "setup(name='p', extras_require=EXTRAS)\n"},
        'python -m pip install -e ".[test]"',
    ),
    "requirements": (
        {"requirements/test.txt": "pytest\n"},
        "python -m pip install -e . -r requirements/test.txt",
    ),
    "requirements testing (more-itertools)": (
        {"requirements/testing.txt": "coverage\n"},
        "python -m pip install -e . -r requirements/testing.txt",
    ),
    "neither": ({"README.md": "x\n"}, "python -m pip install -e . pytest  # andgate init: edit"),
}  # fmt: skip


@pytest.mark.parametrize("kind", INSTALLS)
def test_init_github_installs_the_test_dependencies(make_repo, kind):
    import yaml

    from andgate.commands.init import GITHUB_WORKFLOW

    files, install = INSTALLS[kind]
    repo = make_repo(files)
    assert run_init(repo.path, github=True) == 0
    text = read(repo, GITHUB_WORKFLOW)
    assert f"        run: {install}" in text
    steps = yaml.safe_load(text)["jobs"]["andgate"]["steps"]
    first_run = next(s["run"] for s in steps if "run" in s)
    assert first_run.startswith("python -m pip install -e ")


PLUGIN_HOOKS = frozenset({Construct.PYTEST_PLUGIN, Construct.HARNESS_REFERENCE})


def test_a_pytest_plugins_declared_modules_get_their_hooks_allowed(make_repo, capsys):
    """docs/pytest-plugin-projects.md: a plugin's hooks (and its `import pytest`) are
    production code the scan flags in every change that adds one. init allows them in
    the modules the build files declare, and names a declaration it found no file for."""
    repo = make_repo(
        {
            "pyproject.toml": '[project]\nname = "pytest-x"\n[project.entry-points.pytest11]\n'
            'x = "pytest_x.plugin"\ngone = "pytest_x.gone:hooks"\n',
            "src/pytest_x/__init__.py": "",
            "src/pytest_x/plugin.py": "",
            "src/pytest_x/core.py": "",
        }
    )
    assert run_init(repo.path) == 0
    out = capsys.readouterr().out
    manifest = parse_manifest(read(repo, MANIFEST), MANIFEST)
    assert manifest.production_scan_allow == {"src/pytest_x/plugin.py": PLUGIN_HOOKS}
    assert (
        "pytest plugin modules, their hooks allowed (production_scan.allow): "
        "src/pytest_x/plugin.py\n"
    ) in out
    assert "pytest plugin gone = pytest_x.gone:hooks: no file of this repository holds" in out
    # pytest-timeout's shape: one module at the top, declared in setup.cfg
    single = make_repo(
        {
            "setup.cfg": "[options.entry_points]\npytest11 =\n    timeout = pytest_timeout\n",
            "pytest_timeout.py": "",
        }
    )
    assert run_init(single.path) == 0
    manifest = parse_manifest(read(single, MANIFEST), MANIFEST)
    assert manifest.production_scan_allow == {"pytest_timeout.py": PLUGIN_HOOKS}
    # a project that declares no plugin allows nothing
    plain = make_repo({"pyproject.toml": '[project]\nname = "p"\n', "p/__init__.py": ""})
    assert run_init(plain.path) == 0
    assert "production_scan" not in read(plain, MANIFEST)


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["init", "--help"])
    assert exc.value.code == 0
    assert "Never overwrites a file" in capsys.readouterr().out.replace("\n", " ")


def test_init_github_writes_the_secure_workflow_once(make_repo, capsys):
    import yaml

    from andgate.commands.init import GITHUB_WORKFLOW, github_workflow, run_init
    from andgate.commands.init_build import install_command

    repo = make_repo({"README.md": "x\n"})
    assert run_init(repo.path, github=True) == 0
    written = (repo.path / GITHUB_WORKFLOW).read_text(encoding="utf-8")
    assert written == github_workflow(install_command(repo.path, {}))
    workflow = yaml.safe_load(written)
    assert workflow["permissions"] == {}
    (repo.path / GITHUB_WORKFLOW).write_text("# mine\n")
    assert run_init(repo.path, github=True) == 0
    assert (repo.path / GITHUB_WORKFLOW).read_text() == "# mine\n"  # never overwritten
    assert f"skipped  {GITHUB_WORKFLOW}" in capsys.readouterr().out
