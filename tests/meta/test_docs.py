"""The docs a newcomer reads must be true: every reason code and warning has a
troubleshooting entry with its fix, every `andgate ...` command line names a real command
and real options, and every link between the project's own pages resolves."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from andgate.commands.cli import build_parser
from andgate.records import Reason, Warning_

ROOT = Path(__file__).resolve().parents[2]
TROUBLESHOOTING = ROOT / "docs" / "troubleshooting.md"
README_MAX_LINES = 250


def pages() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "CHANGELOG.md"]
    found.append(ROOT / "CONTRIBUTING.md")
    found += sorted((ROOT / "docs").glob("*.md"))
    found.append(ROOT / "benchmarks" / "README.md")
    return [page for page in found if page.exists()]


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


# -- troubleshooting --------------------------------------------------------------------------


def troubleshooting_sections() -> dict[str, str]:
    """`### CODE` heading -> the text up to the next heading."""
    text = TROUBLESHOOTING.read_text(encoding="utf-8")
    sections = re.split(r"(?m)^### ", text)[1:]
    return {section.split("\n", 1)[0].strip(): section for section in sections}


@pytest.mark.parametrize("code", sorted({c.value for c in Reason} | {c.value for c in Warning_}))
def test_every_reason_and_warning_has_a_troubleshooting_entry_with_its_fix(code):
    sections = troubleshooting_sections()
    assert code in sections, f"docs/troubleshooting.md has no '### {code}' entry"
    assert "**Fix:**" in sections[code], f"docs/troubleshooting.md: {code} gives no **Fix:**"


def test_the_troubleshooting_page_names_no_code_that_does_not_exist():
    known = {c.value for c in Reason} | {c.value for c in Warning_}
    assert set(troubleshooting_sections()) <= known


# -- command lines ----------------------------------------------------------------------------


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def resolve(words: list[str]) -> tuple[list[str], argparse.ArgumentParser]:
    """The subcommand path the words name, and the parser that takes the rest."""
    parser, path = build_parser(), []
    for word in words:
        children = subcommands(parser)
        if word not in children:
            break
        parser, path = children[word], [*path, word]
    return path, parser


def command_lines(text: str) -> list[str]:
    """`andgate ...` as a reader would type it: in code blocks (after an optional `$ ` or
    `run: `) and in inline code."""
    found = []
    for block in re.findall(r"(?ms)^```[a-z]*\n(.*?)^```", text):
        for line in block.splitlines():
            line = re.sub(r"^\s*(?:\$ |- run: |run: )?", "", line)
            line = re.split(r"\s+#|\s{3,}", line)[0]  # a comment, or a diagram's next column
            found += [part.strip() for part in re.split(r"&&|;|\|\|", line)]
    found += re.findall(r"`(andgate [^`]+)`", text)
    # `andgate check: error: ...` quotes a message, not a command line
    return [line for line in found if re.match(r"andgate [a-z-]+(?!:)\b(?!:)", line)]


def with_placeholders_filled(line: str) -> list[str]:
    line = re.sub(r"\$\{\{[^}]*\}\}", "1", line)
    line = re.sub(r"\[[^\]]*\]", "", line)  # [--days N]: optional parts of a synopsis
    line = line.replace("...", "").replace("|", " ")
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def all_command_lines() -> list[tuple[str, str]]:
    return [(page_id(p), line) for p in pages() for line in command_lines(p.read_text("utf-8"))]


def test_the_docs_show_command_lines():
    assert len(all_command_lines()) > 30


@pytest.mark.parametrize(("page", "line"), all_command_lines())
def test_every_command_line_names_a_real_command_and_options(page, line):
    words = with_placeholders_filled(line)[1:]
    path, parser = resolve(words)
    assert path, f"{page}: `{line}` names no andgate command"
    known = options_of(parser)
    for word in words[len(path) :]:
        flag = word.split("=", 1)[0]
        if flag.startswith("-") and flag != "-":
            assert flag in known, f"{page}: `{line}`: {flag} is not an option of {path}"


def code_block_command_lines() -> list[tuple[str, str]]:
    lines = []
    for page in pages():
        for block in re.findall(r"(?ms)^```[a-z]*\n(.*?)^```", page.read_text("utf-8")):
            lines += [(page_id(page), line) for line in command_lines(f"```\n{block}```\n")]
    return lines


@pytest.mark.parametrize(("page", "line"), code_block_command_lines())
def test_every_command_line_in_a_code_block_parses(page, line):
    words = with_placeholders_filled(line)[1:]
    with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.suppress(SystemExit):
        build_parser().parse_args(words)
    assert not err.getvalue(), f"{page}: `{line}`: {err.getvalue().strip().splitlines()[-1]}"


# -- links ------------------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text("utf-8"))
    return {slug(h) for h in re.findall(r"(?m)^#+ (.+)$", text)}


def internal_links() -> list[tuple[str, str]]:
    links = []
    for page in pages():
        text = re.sub(r"(?ms)^```.*?^```", "", page.read_text("utf-8"))
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if not re.match(r"[a-z]+:", target):
                links.append((page_id(page), target))
    return links


@pytest.mark.parametrize(("page", "target"), internal_links())
def test_every_internal_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    file = (ROOT / page).parent / path if path else ROOT / page
    assert file.exists(), f"{page}: link {target} points at nothing"
    if anchor and file.suffix == ".md":
        assert anchor in anchors(file), f"{page}: link {target}: no heading #{anchor}"


def test_the_readme_is_a_guide_not_a_reference():
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES


def pinned_versions() -> list[tuple[str, str]]:
    files = [*pages(), ROOT / "src" / "andgate" / "commands" / "templates" / "github_workflow.yml"]
    pins = []
    for file in files:
        text = file.read_text("utf-8")
        pins += [(file.name, v) for v in re.findall(r"andgate/andgate@(v[\w.]+)", text)]
        pins += [(file.name, v) for v in re.findall(r"(?m)^\s*rev: (v[\w.]+)", text)]
        pins += [(file.name, v) for v in re.findall(r"andgate(?:\.git)?@(v[\w.]+)", text)]
    return pins


def test_every_example_pins_the_version_this_release_tags():
    from andgate import __version__

    pins = pinned_versions()
    assert pins
    assert {version for _, version in pins} == {f"v{__version__}"}, pins


def test_the_manifest_page_names_every_construct_and_key():
    from andgate.records import Construct
    from andgate.trust.manifest import MANIFEST_SCHEMA

    page = (ROOT / "docs" / "manifest.md").read_text("utf-8")
    for construct in Construct:
        assert f"`{construct.value}`" in page, construct
    for key in MANIFEST_SCHEMA:
        assert f"\n{key.name}:" in page, key.name


PACKAGE_NAMES = (
    "check",
    "trust",
    "process",
    "report",
    "commands",
    "plugin",
    "verdict",
    "records",
    "git",
    "writer",
    "errors",
    "exitcodes",
)


def resolves(name: str) -> bool:
    """`name` (dotted, below `andgate`) imports as a module, then its attributes exist."""
    import importlib

    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module("andgate." + ".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute, None)
        return found is not None
    return False


def dotted_names(text: str) -> set[str]:
    """Backticked `a.b.c` names whose first part is one of andgate's own packages."""
    names = set(re.findall(r"`([a-z_]+(?:\.[A-Za-z_]+)+)(?:\(\))?`", text))
    files = (".py", ".json", ".md", ".xml", ".html", ".log")  # `verdict.json` is a file
    return {n for n in names if n.split(".")[0] in PACKAGE_NAMES and not n.endswith(files)}


def test_architecture_names_only_what_exists():
    """ARCHITECTURE.md's "where is X decided" answers are dotted names: each must
    import, so a move or rename that forgets the map fails here."""
    names = dotted_names((ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    assert len(names) > 30
    assert [n for n in sorted(names) if not resolves(n)] == []


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_every_dotted_name_a_page_gives_exists(page: Path) -> None:
    """The guides name functions as `stage.module.name`: a move that forgets a page
    fails here, not in a reader's search."""
    names = dotted_names(page.read_text(encoding="utf-8"))
    assert [n for n in sorted(names) if not resolves(n)] == []


# -- install lines ----------------------------------------------------------------------------

# andgate has no published release location: no repository hosts its tags, and nothing is on
# PyPI. An install line, an action's `uses:` or a pre-commit `repo:` must name the user's own
# copy (the placeholder OWNER), a local path, or say on its line that it needs a release that
# must be published first.
UNPUBLISHED_HOME = "github.com/andgate/andgate"
PLACEHOLDER = "OWNER"
RELEASE_MARK = "published release"
INSTALL_SOURCE = re.compile(
    r"git\+[a-z]+://\S+"  # pip's VCS URLs
    r"|\buses:\s*[\w.-]+/andgate@\S+"  # the GitHub Action
    r"|\brepo:\s*(?!local\b)\S*andgate\S*"  # a pre-commit repository
    r"|\bpip install [^\n]*\bandgate==\S+"  # a release on an index
)


def install_files() -> list[Path]:
    return [
        *pages(),
        ROOT / "action.yml",
        ROOT / ".pre-commit-hooks.yaml",
        ROOT / "src" / "andgate" / "commands" / "templates" / "github_workflow.yml",
    ]


def install_sources() -> list[tuple[str, str, str]]:
    """(file:line, the source it names, the line) of every install source in the docs."""
    found = []
    for file in install_files():
        for number, line in enumerate(file.read_text("utf-8").splitlines(), 1):
            where = f"{file.relative_to(ROOT)}:{number}"
            found += [(where, m[0], line) for m in INSTALL_SOURCE.finditer(line)]
    return found


def test_the_docs_show_install_sources():
    kinds = {source.split(":", 1)[0].split("+", 1)[0] for _, source, _ in install_sources()}
    assert {"git", "uses", "repo"} <= kinds, kinds


@pytest.mark.parametrize(
    ("where", "source", "line"), install_sources(), ids=[s[0] for s in install_sources()]
)
def test_every_install_source_is_the_users_own_copy_or_marked_unpublished(where, source, line):
    if RELEASE_MARK in line:
        return
    assert PLACEHOLDER in source, (
        f"{where}: `{source}` names a location that hosts no andgate release; name the "
        f"user's copy ({PLACEHOLDER}/andgate) or mark the line as needing a {RELEASE_MARK}"
    )


@pytest.mark.parametrize("file", install_files(), ids=lambda f: str(f.relative_to(ROOT)))
def test_no_file_names_the_unpublished_home_as_an_install_source(file):
    for number, line in enumerate(file.read_text("utf-8").splitlines(), 1):
        assert UNPUBLISHED_HOME not in line or RELEASE_MARK in line, (
            f"{file.relative_to(ROOT)}:{number}: {UNPUBLISHED_HOME} hosts no release"
        )


def test_the_readme_installs_from_a_local_copy_first():
    """The one install that works on a fresh machine as written, before any URL."""
    install = (ROOT / "README.md").read_text("utf-8").split("## Install", 1)[1]
    block = re.search(r"(?ms)^```sh\n(.*?)^```", install)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block[1].splitlines()]
    commands = [c for c in commands if c]
    assert commands[0] == "pip install ./andgate"
    assert "pip wheel --no-deps -w dist ./andgate && pip install dist/andgate-*.whl" in commands
