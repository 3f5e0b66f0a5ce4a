"""Mutation testing for andgate's pure modules: do the fast tests discriminate a fault?

    python tools/mutation.py --module verdict --module plugin.classify --json mutation.json

A module is named by its import path below `andgate` (`verdict`, `plugin.classify`,
`trust.manifest`, `trust.freeze`, `trust.authorship`; file src/andgate/<dots as slashes>.py),
and `--module` also takes the last part alone when it names one module (`--module manifest`
is `trust.manifest`). A mutant's id starts with the full dotted name
(`trust.manifest:73: ...`), in the output and in `tools/mutation_equivalent.txt`.

A small AST mutator of our own rather than mutmut. mutmut 3 copies the tree into `mutants/`
and turns every function into a trampoline that picks the mutant inside the test process; a
process the code starts itself (the gate's pytest processes, where the plugin runs
`classify`) imports the code from elsewhere and never meets the mutant, and mutmut needs a
config section of its own. Here each mutant is written over the module file itself, so every
importer, in any process, runs it; the original is restored afterwards, always
(try/finally, plus a backup copy next to the module that a later run refuses to overwrite).
Do not run other tests of the same checkout meanwhile: they would import the mutant.

Each mutant changes one AST node: a comparison operator swapped, `and`/`or` swapped, a `not`
dropped, a constant changed, a `return` made to return None, a statement in a function body
removed, an `if` condition replaced by True or False, an augmented assignment made a plain
one (`x += y` -> `x = y`), or a call's argument dropped (a keyword argument) or replaced by
None (any argument). The last two are mutmut's operators; they found fail-open mutants the
others missed (`findings += more` made `findings = more` drops every earlier reason).
The mapped fast test files run once per mutant (`pytest -x`, a timeout per mutant) in a
child forked from a parent that imported pytest once (`--fresh`: a new `python -m pytest`
per mutant, about 3x slower); a failing run kills the mutant. A mutant that no test can
tell from the original is listed with a reason in
`tools/mutation_equivalent.txt` and left out of the score.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "andgate"
EQUIVALENT_FILE = ROOT / "tools" / "mutation_equivalent.txt"
SEPARATOR = " -- "
# Fast unit tests only: none of these starts a pytest process or runs `andgate check`.
# Keys: the module's import path below `andgate` (see module_path).
TESTS = {
    # verdict.py's rules for disputes and for oracle files base cannot collect are unit
    # tested beside the rest of those features.
    "verdict": (
        "tests/leaves/test_verdict.py",
        "tests/leaves/test_verdict_dispute_only.py",
        "tests/leaves/test_verdict_evidence.py",
        "tests/trust/test_disputes.py",
        "tests/check/test_skips.py",
    ),
    "plugin.classify": ("tests/plugin/test_classify_reasons.py", "tests/plugin/test_classify.py"),
    "trust.manifest": ("tests/trust/test_manifest.py",),
    "trust.freeze": ("tests/trust/test_freeze.py",),
    "trust.authorship": (
        "tests/trust/test_authorship.py",
        "tests/trust/test_paths_and_authorship.py",
    ),
}
PYTEST = ("-m", "pytest", "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider")
# What no unit test uses, left out to keep a mutant's run near half a second: the plugins
# (Hypothesis's alone imports all of Hypothesis at every start; @given needs no plugin) and
# tests/conftest.py (its fixtures build git repositories, and it imports the whole gate).
# A forked child finds the preloaded plugins already imported, too late for pytest to
# rewrite their asserts; that warning is an error under the project's filterwarnings.
FORKED = ("-W", "ignore::pytest.PytestAssertRewriteWarning")
UNUSED = ("-p", "no:hypothesispytest", "-p", "no:xdist", "-p", "no:rerunfailures", "--noconftest")
SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
SYMBOLS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


KINDS = (
    "compare", "boolop", "not", "constant", "return", "if", "remove",
    "augassign", "kwarg_drop", "arg_none",
)  # fmt: skip

# -- mutants ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One change to one node; `index` is the node's place in `ast.walk` order."""

    module: str
    index: int
    kind: str
    line: int
    description: str
    arg: int = 0  # which operator of a chained comparison; 1 for "if -> True"

    @property
    def id(self) -> str:
        return f"{self.module}:{self.line}: {self.description}"


def _segment(source: str, node: ast.AST, limit: int = 60) -> str:
    text = ast.get_source_segment(source, node) or ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring nodes (string constants that are never mutated)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first))
                found.add(id(first.value))
    return found


def _in_functions(tree: ast.Module) -> set[int]:
    """ids of the statements inside function bodies, at any depth."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.stmt) and inner is not node:
                    found.add(id(inner))
    return found


def _annotations(tree: ast.Module) -> set[int]:
    """ids of every node inside an annotation: never evaluated here (PEP 563)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            notes.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            notes.append(node.returns)
        found |= {id(inner) for note in notes for inner in ast.walk(note)}
    return found


def _node_mutants(module: str, index: int, node: ast.AST, source: str) -> Iterator[Mutant]:
    line = getattr(node, "lineno", 0)

    def mutant(kind: str, description: str, arg: int = 0) -> Mutant:
        return Mutant(module, index, kind, line, description, arg)

    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = SWAPS[type(op)]
            text = f"{SYMBOLS[type(op)]} -> {SYMBOLS[new]} in `{_segment(source, node)}`"
            yield mutant("compare", text, i)
    elif isinstance(node, ast.BoolOp):
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        yield mutant("boolop", f"{old} -> {new} in `{_segment(source, node)}`")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield mutant("not", f"`{_segment(source, node)}` -> drop the not")
    elif isinstance(node, ast.Constant):
        yield from _constant_mutants(node, mutant)
    elif isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield mutant("return", f"`{_segment(source, node)}` -> return None")
    elif isinstance(node, ast.If):
        test = _segment(source, node.test)
        yield mutant("if", f"if `{test}` -> if True", 1)
        yield mutant("if", f"if `{test}` -> if False", 0)
    elif isinstance(node, ast.AugAssign):
        yield mutant("augassign", f"`{_segment(source, node)}` -> plain `=`")
    elif isinstance(node, ast.Call):
        yield from _argument_mutants(node, source, mutant)


def _argument_mutants(
    node: ast.Call, source: str, mutant: Callable[[str, str, int], Mutant]
) -> Iterator[Mutant]:
    """Each keyword argument dropped; each argument (positional first) replaced by None."""
    call = _segment(source, node.func, 30)
    for i, keyword in enumerate(node.keywords):
        if keyword.arg is not None:
            yield mutant("kwarg_drop", f"drop `{keyword.arg}=` from `{call}(...)`", i)
    for i, value in enumerate([*node.args, *(k.value for k in node.keywords)]):
        if not isinstance(value, ast.Starred | ast.Constant) or value.value is not None:
            yield mutant("arg_none", f"`{_segment(source, value, 40)}` -> None in `{call}(...)`", i)


def _constant_mutants(node: ast.Constant, mutant: Callable[[str, str], Mutant]) -> Iterator[Mutant]:
    value = node.value
    if isinstance(value, bool):
        yield mutant("constant", f"{value} -> {not value}")
    elif isinstance(value, int):
        yield mutant("constant", f"{value} -> {value + 1}")
    elif isinstance(value, str):
        shown = " ".join(repr(value).split())
        shown = shown if len(shown) <= 50 else shown[:47] + "..."
        yield mutant("constant", f"{shown} -> 'XX'")


def enumerate_mutants(module: str, source: str) -> list[Mutant]:
    tree = ast.parse(source)
    skip = _docstrings(tree) | _annotations(tree)
    statements = _in_functions(tree)
    found: list[Mutant] = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        found += _node_mutants(module, index, node, source)
        if id(node) in statements and not isinstance(node, ast.Pass):
            text = f"remove `{_segment(source, node)}`"
            found.append(Mutant(module, index, "remove", node.lineno, text))
    return sorted(_unique(found), key=lambda m: (m.line, m.index, m.arg))


def _unique(mutants: list[Mutant]) -> list[Mutant]:
    """The same description twice on a line gets a #2, so every id stays distinct."""
    seen: dict[str, int] = {}
    result = []
    for m in mutants:
        seen[m.id] = seen.get(m.id, 0) + 1
        if seen[m.id] > 1:
            m = Mutant(m.module, m.index, m.kind, m.line, f"{m.description} #{seen[m.id]}", m.arg)
        result.append(m)
    return result


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return self.replacement
        return self.generic_visit(node)


def mutate(source: str, mutant: Mutant) -> str:
    """The module's source with `mutant` applied (reformatted by `ast.unparse`)."""
    tree = ast.parse(source)
    node = list(ast.walk(tree))[mutant.index]
    new = copy.copy(node)
    if mutant.kind == "compare":
        assert isinstance(new, ast.Compare)
        new.ops = list(new.ops)
        new.ops[mutant.arg] = SWAPS[type(new.ops[mutant.arg])]()
    elif mutant.kind == "boolop":
        assert isinstance(new, ast.BoolOp)
        new.op = ast.Or() if isinstance(new.op, ast.And) else ast.And()
    elif mutant.kind == "not":
        assert isinstance(new, ast.UnaryOp)
        new = new.operand
    elif mutant.kind == "constant":
        assert isinstance(new, ast.Constant)
        new.value = _changed_constant(new.value)
    elif mutant.kind == "return":
        assert isinstance(new, ast.Return)
        new.value = None
    elif mutant.kind == "if":
        assert isinstance(new, ast.If)
        new.test = ast.Constant(bool(mutant.arg))
    elif mutant.kind == "augassign":
        assert isinstance(new, ast.AugAssign)
        new = ast.Assign(targets=[new.target], value=new.value)
    elif mutant.kind in ("kwarg_drop", "arg_none"):
        assert isinstance(new, ast.Call)
        new = _mutated_call(new, mutant)
    elif mutant.kind == "remove":
        new = ast.Pass()
    tree = _Replace(node, ast.copy_location(new, node)).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _mutated_call(call: ast.Call, mutant: Mutant) -> ast.Call:
    args, keywords = list(call.args), list(call.keywords)
    if mutant.kind == "kwarg_drop":
        del keywords[mutant.arg]
    elif mutant.arg < len(args):
        args[mutant.arg] = ast.Constant(None)
    else:
        at = mutant.arg - len(args)
        keywords[at] = ast.keyword(arg=keywords[at].arg, value=ast.Constant(None))
    return ast.Call(func=call.func, args=args, keywords=keywords)


def _changed_constant(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return "XX"


# -- equivalent mutants -------------------------------------------------------------------


def load_equivalent(path: Path = EQUIVALENT_FILE) -> dict[str, str]:
    """`<module>:<line>: <description> -- <reason>` lines; `#` starts a comment line."""
    listed = {}
    if not path.exists():
        return listed
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        ident, sep, reason = line.partition(SEPARATOR)
        if not sep or not reason.strip():
            sys.exit(f"{path}:{number}: write '<id>{SEPARATOR}<why it is equivalent>'")
        listed[ident.strip()] = reason.strip()
    return listed


# -- running ------------------------------------------------------------------------------


@dataclass
class Result:
    id: str
    line: int
    description: str
    status: str  # killed, survived, equivalent (survived and listed), timeout
    seconds: float
    listed: bool  # in tools/mutation_equivalent.txt


def run_tests(tests: Sequence[str], timeout: float, cache: str, fresh: bool) -> str:
    """killed, survived or timeout (a timeout counts as killed)."""
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        _child(tests, cache, fresh)
    return _wait(pid, timeout)


def _child(tests: Sequence[str], cache: str, fresh: bool) -> None:
    """Run pytest in this forked child, then exit with its code.

    No bytecode is read from or written to the repository: a mutant of the same size
    written within the same second could otherwise run from a stale .pyc.
    """
    code = 99
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.chdir(ROOT)
        if fresh:
            env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": cache}
            os.execve(sys.executable, [sys.executable, *PYTEST, *UNUSED, *tests], env)
        sys.dont_write_bytecode = True
        sys.pycache_prefix = cache
        sys.path[0] = str(ROOT)  # as `python -m pytest` would have it
        import pytest

        code = int(pytest.main([*PYTEST[2:], *FORKED, *UNUSED, *tests]))
    finally:
        os._exit(code)


def _wait(pid: int, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"
            if time.monotonic() > deadline:
                _kill(pid)
                return "timeout"
            time.sleep(0.01)
    except BaseException:
        _kill(pid)
        raise


def _kill(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError):
            kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def preload() -> None:
    """Import pytest and what the unit tests import, except andgate itself, once: each
    forked child then starts in a few hundred milliseconds less and imports andgate, the
    mutated module included, from disk."""
    for name in ("pytest", "hypothesis", "hypothesis.strategies", "yaml", "pathspec"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


class ModuleFile:
    """The module file, mutated in place; restored on exit, even on Ctrl-C."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.backup = path.with_name(f".{path.name}.mutation-backup")

    def __enter__(self) -> ModuleFile:
        if self.backup.exists():
            sys.exit(
                f"{self.backup} exists: an earlier run was killed before it restored "
                f"{self.path.name}; check it and run: mv {self.backup} {self.path}"
            )
        self.original = self.path.read_bytes()
        shutil.copy2(self.path, self.backup)
        return self

    def write(self, source: str) -> None:
        self.path.write_text(source, encoding="utf-8")

    def __exit__(self, *exc: object) -> None:
        self.path.write_bytes(self.original)
        self.backup.unlink()


def module_path(module: str) -> Path:
    """`trust.manifest` -> src/andgate/trust/manifest.py."""
    return PACKAGE.joinpath(*module.split(".")).with_suffix(".py")


def module_name(name: str) -> str:
    """A key of TESTS, or the last part of exactly one key (`manifest` -> `trust.manifest`)."""
    if name in TESTS:
        return name
    matches = [key for key in TESTS if key.rpartition(".")[2] == name]
    if len(matches) != 1:
        choices = ", ".join(sorted(TESTS))
        raise argparse.ArgumentTypeError(f"unknown module {name!r} (choose from {choices})")
    return matches[0]


def _source(module: str) -> str:
    return module_path(module).read_text(encoding="utf-8")


def run_module(args: argparse.Namespace, module: str, equivalent: dict[str, str]) -> list[Result]:
    path = module_path(module)
    source = path.read_text(encoding="utf-8")
    mutants = [
        m
        for m in enumerate_mutants(module, source)
        if (not args.only or m.line in args.only) and (not args.kind or m.kind in args.kind)
    ]
    tests = args.tests or TESTS[module]
    results = []
    with tempfile.TemporaryDirectory(prefix="andgate-mutation-") as cache, ModuleFile(path) as f:
        # The baseline runs the unparsed, unmutated module: the tests must pass on it.
        f.write(ast.unparse(ast.parse(source)) + "\n")
        if run_tests(tests, args.timeout, cache, args.fresh) != "survived":
            command = " ".join(["python", *PYTEST, *UNUSED, *tests])
            sys.exit(f"{module}: the tests fail on the unmutated module; see why: {command}")
        for number, mutant in enumerate(mutants, 1):
            started = time.monotonic()
            f.write(mutate(source, mutant))
            status = run_tests(tests, args.timeout, cache, args.fresh)
            if status == "survived" and mutant.id in equivalent:
                status = "equivalent"
            seconds = round(time.monotonic() - started, 2)
            listed = mutant.id in equivalent
            results.append(
                Result(mutant.id, mutant.line, mutant.description, status, seconds, listed)
            )
            if status in ("survived", "equivalent") or args.verbose:
                print(f"  [{number}/{len(mutants)}] {status}: {mutant.id}", flush=True)
            elif number % 50 == 0:
                print(f"  [{number}/{len(mutants)}]", flush=True)
    return results


@dataclass(frozen=True)
class Summary:
    module: str
    mutants: int
    killed: int  # timeouts included
    survived: int
    equivalent: int  # survived and listed: left out of the score
    score: float  # killed / (mutants - equivalent), in percent
    listed_but_killed: tuple[str, ...]  # entries of the list that a test kills after all


def summary(module: str, results: list[Result]) -> Summary:
    killed = sum(r.status in ("killed", "timeout") for r in results)
    equivalent = sum(r.status == "equivalent" for r in results)
    scored = len(results) - equivalent
    return Summary(
        module=module,
        mutants=len(results),
        killed=killed,
        survived=sum(r.status == "survived" for r in results),
        equivalent=equivalent,
        score=round(100.0 * killed / scored, 1) if scored else 100.0,
        listed_but_killed=tuple(r.id for r in results if r.listed and r.status != "equivalent"),
    )


def print_summary(row: Summary) -> None:
    print(
        f"{row.module:<17} mutants {row.mutants:>4}  killed {row.killed:>4}  "
        f"survived {row.survived:>3}  equivalent {row.equivalent:>3}  score {row.score:>5}%",
        flush=True,
    )
    for ident in row.listed_but_killed:
        print(f"  listed as equivalent but killed (remove it from the list): {ident}")


def stale_entries(modules: Sequence[str], equivalent: dict[str, str]) -> list[str]:
    ids = set()
    for module in modules:
        ids |= {m.id for m in enumerate_mutants(module, _source(module))}
    chosen = tuple(f"{m}:" for m in modules)
    unknown = [i for i in equivalent if i.partition(":")[0] not in TESTS]  # a renamed module
    return sorted({*unknown, *(i for i in equivalent if i.startswith(chosen) and i not in ids)})


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--module",
        action="append",
        type=module_name,
        help="a module to mutate: "
        + ", ".join(sorted(TESTS))
        + " (or the last part alone; repeatable; default: all of them)",
    )
    parser.add_argument(
        "--tests", action="append", help="a test file to run instead of the mapped ones"
    )
    parser.add_argument("--list", action="store_true", help="list the mutants; run nothing")
    parser.add_argument("--json", type=Path, help="write every result to this JSON file")
    parser.add_argument(
        "--only", type=int, action="append", help="only the mutants on this line (repeatable)"
    )
    parser.add_argument(
        "--kind",
        action="append",
        choices=KINDS,
        help="only the mutants of this operator (repeatable)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant")
    parser.add_argument(
        "--fail-under", type=float, default=90.0, help="exit 1 when a score is lower"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="start a new interpreter per mutant (python -m pytest ...), about 3x slower",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every mutant")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    modules = args.module or sorted(TESTS)
    equivalent = load_equivalent()
    for ident in stale_entries(modules, equivalent):
        print(f"warning: {EQUIVALENT_FILE.name} lists a mutant that no longer exists: {ident}")
    if args.list:
        for module in modules:
            for m in enumerate_mutants(module, _source(module)):
                if not args.only or m.line in args.only:
                    mark = "  (equivalent)" if m.id in equivalent else ""
                    print(f"{m.id}{mark}")
        return 0
    if not args.fresh:
        preload()
    rows, everything = [], {}
    for module in modules:
        print(f"{module}: {' '.join(args.tests or TESTS[module])}", flush=True)
        try:
            results = run_module(args, module, equivalent)
        except KeyboardInterrupt:
            print(
                f"interrupted; {module_path(module).relative_to(ROOT)} is restored", file=sys.stderr
            )
            return 130
        rows.append(summary(module, results))
        everything[module] = [asdict(r) for r in results]
    print()
    for row in rows:
        print_summary(row)
    if args.json:
        payload = {"summary": [asdict(r) for r in rows], "mutants": everything}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 1 if any(r.score < args.fail_under for r in rows) else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sys.exit(main())
