"""Test-run probes: production code that tells a test run from a plain interpreter by
what a test run changes in the process, and decides by it (`test_run_probe`).

pytest enables the fault handler, applies the project's `filterwarnings` (an
`"error"` action), hangs its log-capture handler on the root logger, replaces
`threading.excepthook` and `sys.unraisablehook`, captures `sys.stdout`, loads
modules a plain interpreter never does (`pluggy`, `pdb`, `argparse`...); coverage and
debuggers set a trace function; CI and tox set variables; andgate runs Python with
`-P` (`sys.flags.safe_path`) and `sys.argv[0]` is `-c`. Code that counts two per item
outside tests and one under pytest, keyed on `faulthandler.is_enabled()`, passes every
test and is wrong everywhere else.

A read of such state counts where it decides something: the test of an `if`, `while`,
`assert`, a conditional expression or a comprehension's `if`, an operand of a
comparison, `and`/`or`/`not` or arithmetic, an index, an argument of `bool`, `any`,
`all`, `len`..., the value a function or lambda returns; also through a name bound to
it (`ON = faulthandler.is_enabled()`, then `if ON:`). Honest code reads some of this
state to configure the same subsystem (`if not logging.root.handlers:
logging.basicConfig()`, `if not sys.warnoptions: warnings.simplefilter("default")`,
`if not faulthandler.is_enabled(): faulthandler.enable()`): an `if` or `while` whose
every branch only configures logging, warnings, the fault handler or tracing is not
reported. The fault handler's state and pytest's own handler and internals are
reported wherever they are read, as nothing honest reads them otherwise.
"""

from __future__ import annotations

import ast
import re
import sys
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from andgate.check.production.common import Hit, Names, Scope, node_lines, own_expressions, short
from andgate.records import Construct

FAULT_HANDLER = "pytest enables the fault handler"
TRACER = "coverage and debuggers set a trace function"
WARNINGS = "the project's filterwarnings apply under pytest"
ROOT_HANDLERS = "pytest's log capture adds a handler to the root logger"
CAPTURE = "pytest captures the standard streams"
HOOKS = "pytest replaces the unraisable and thread exception hooks"
ARGV = "the program pytest or andgate runs as"
BYTECODE = "the bytecode settings of the running interpreter"
# What a read of these names tells, and whether it counts wherever it is read.
CALLS = {
    "faulthandler.is_enabled": (FAULT_HANDLER, True),
    "sys.gettrace": (TRACER, False),
    "sys.getprofile": (TRACER, False),
    "threading.gettrace": (TRACER, False),
    "threading.getprofile": (TRACER, False),
    "sys.monitoring.get_tool": (TRACER, False),
}
ATTRIBUTES = {
    "warnings.filters": (WARNINGS, False),
    "sys.warnoptions": (WARNINGS, False),
    "warnings.defaultaction": (WARNINGS, False),
    "warnings._filters_mutated": (WARNINGS, True),
    "warnings._filters_mutated_lock_held": (WARNINGS, True),
    "warnings._filters_version": (WARNINGS, True),
    "logging._handlerList": (ROOT_HANDLERS, True),
    "logging._handlers": (ROOT_HANDLERS, True),
    "sys.__stdout__": (CAPTURE, False),
    "sys.__stderr__": (CAPTURE, False),
    "sys.__stdin__": (CAPTURE, False),
    "sys.unraisablehook": (HOOKS, False),
    "sys.__unraisablehook__": (HOOKS, False),
    "threading.excepthook": (HOOKS, False),
    "threading.__excepthook__": (HOOKS, False),
    "sys.dont_write_bytecode": (BYTECODE, False),
    "sys.pycache_prefix": (BYTECODE, False),
}
# `sys.flags` a program reads for what it asks of itself, not for who runs it; an
# interactive session (`-i`) is told apart from a script, and a test run is a script.
HONEST_FLAGS = frozenset(
    {"optimize", "utf8_mode", "dev_mode", "int_max_str_digits", "debug", "interactive", "inspect"}
)
# pytest's logging plugin, by the names of its handlers
PYTEST_HANDLERS = re.compile(r"^(?:LogCaptureHandler|_LiveLogging\w*|catching_logs|_FileHandler)$")
ENVIRONMENT_READERS = frozenset({"os.environ.get", "os.getenv", "os.environb.get", "os.getenvb"})
ENVIRONMENT_MAPS = frozenset({"os.environ", "os.environb"})
# Variables a test run, a coverage run, tox or CI sets (PYTEST_* and ANDGATE_* are
# harness_env).
TEST_RUN_VARIABLES = re.compile(
    r"^(?:PYTHON(?:HASHSEED|FAULTHANDLER|WARNINGS|DEVMODE|SAFEPATH|DONTWRITEBYTECODE"
    r"|PYCACHEPREFIX|TRACEMALLOC)|COV_CORE_\w*|COVERAGE_\w*|TOX_\w*|NOX_\w*|HYPOTHESIS_\w*"
    r"|CI|CONTINUOUS_INTEGRATION|GITHUB_ACTIONS|GITLAB_CI|TF_BUILD|BUILDKITE|CIRCLECI"
    r"|TRAVIS|JENKINS_URL|BUILD_ID)$"
)
# Modules loaded before any code of the program runs, and those honest code asks
# about to cooperate with them (an event loop, threads, an interactive shell): asking
# whether any other standard-library module is loaded asks what else runs.
STARTUP_MODULES = frozenset(
    {"abc", "builtins", "codecs", "collections", "copyreg", "encodings", "enum"}
    | {"functools", "genericpath", "io", "itertools", "keyword", "marshal", "operator"}
    | {"os", "posix", "posixpath", "nt", "ntpath", "re", "reprlib", "site", "stat", "sys"}
    | {"time", "types", "zipimport", "__main__"}
)
COOPERATION_MODULES = frozenset(
    {"asyncio", "threading", "multiprocessing", "concurrent", "readline", "rlcompleter"}
    | {"tkinter", "curses", "ctypes", "ssl", "socket", "select", "selectors", "signal"}
    | {"sqlite3", "typing", "dataclasses", "contextvars", "gc", "tracemalloc"}
)
PYTEST_LOADS = frozenset(
    {"pluggy", "iniconfig", "py", "execnet", "coverage", "pytest_cov", "_hypothesis_globals"}
    | {"_hypothesis_pytestplugin", "pygments", "exceptiongroup"}
)
HARNESS_WORDS = ("pytest", "py.test", "unittest", "andgate", "nose")
PREDICATES = frozenset({"bool", "any", "all", "len", "int", "sum", "max", "min", "sorted"})
# What an `if` whose every branch only configures the state it read may call.
CONFIGURATION_MODULES = ("logging.", "warnings.", "faulthandler.")
TRACE_SETTERS = frozenset(
    {"sys.settrace", "sys.setprofile", "threading.settrace", "threading.setprofile"}
)
LOGGER_CONFIGURATION = frozenset(
    {"addHandler", "removeHandler", "setLevel", "setFormatter", "addFilter", "removeFilter"}
)
LOGGER_MESSAGES = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
)
CONFIGURATION_ATTRIBUTES = frozenset({"propagate", "disabled", "level", "formatter"})


@dataclass(frozen=True)
class Signal:
    """What a read tells about the run, and whether it counts wherever it is read."""

    why: str
    anywhere: bool = False
    # sys.argv, the environment, sys.modules: tested against a runner's name, they
    # are `harness_reference`/`harness_env`, and left to them
    runner_context: bool = False
    # whether it still tells once bound to a name: a path built from `sys.argv[0]`
    # (a script finding its folder) is not the program's name
    through_names: bool = True
    # text, not a number or a flag: it decides only when compared or tested, not
    # when concatenated or picked with `or` (`sys.argv and sys.argv[0] or __file__`)
    text: bool = False


def signal_of(names: Names, node: ast.AST, qualname: str) -> Signal | None:
    """The test-run state `node` reads, if it reads some."""
    if isinstance(node, ast.Call):
        return call_signal(names, node, qualname)
    if isinstance(node, ast.Attribute):
        return attribute_signal(names, node, qualname)
    if isinstance(node, ast.Subscript):
        return item_signal(names, node)
    if isinstance(node, ast.Compare):
        return membership_signal(names, node)
    if isinstance(node, ast.Constant) and PYTEST_HANDLERS.match(str(node.value)):
        return Signal(ROOT_HANDLERS, anywhere=True)
    return None


def call_signal(names: Names, node: ast.Call, qualname: str) -> Signal | None:
    name = names.dotted(node.func) or ""
    if name in CALLS:
        why, anywhere = CALLS[name]
        return Signal(why, anywhere)
    first = node.args[0] if node.args else None
    if name in ENVIRONMENT_READERS:
        return variable_signal(first)
    if name == "sys.modules.get":
        return module_signal(first)
    if name == "len" and first is not None and names.dotted(first) == "sys.modules":
        return Signal(
            "how many modules are loaded (a test run loads hundreds)", runner_context=True
        )
    func = node.func
    is_handlers = isinstance(func, ast.Attribute) and func.attr == "hasHandlers"
    if is_handlers and is_logger(names, func.value, qualname):  # type: ignore[attr-defined]
        return Signal(ROOT_HANDLERS)
    return None


def attribute_signal(names: Names, node: ast.Attribute, qualname: str) -> Signal | None:
    name = names.dotted(node) or ""
    if name in ATTRIBUTES:
        why, anywhere = ATTRIBUTES[name]
        return Signal(why, anywhere)
    if name.startswith("sys.flags.") and node.attr not in HONEST_FLAGS:
        return Signal(
            "the interpreter's flags differ under a test run (andgate runs Python with -P)"
        )
    if node.attr == "handlers" and is_root_logger(names, node.value, qualname):
        return Signal(ROOT_HANDLERS)
    return None


def item_signal(names: Names, node: ast.Subscript) -> Signal | None:
    container = names.dotted(node.value)
    key = node.slice
    if isinstance(node.ctx, ast.Store | ast.Del):
        return None  # a write: `environment_write`, `import_machinery`
    if container == "sys.argv" and isinstance(key, ast.Constant) and key.value == 0:
        return Signal(ARGV, runner_context=True, through_names=False, text=True)
    if container in ENVIRONMENT_MAPS:
        return variable_signal(key)
    if container == "sys.modules":
        return module_signal(key)
    return None


def membership_signal(names: Names, node: ast.Compare) -> Signal | None:
    """`"CI" in os.environ`, `"pdb" in sys.modules`."""
    if len(node.ops) != 1 or not isinstance(node.ops[0], ast.In | ast.NotIn):
        return None
    container = names.dotted(node.comparators[0])
    if container in ENVIRONMENT_MAPS:
        return variable_signal(node.left)
    if container in ("sys.modules", "sys.modules.keys"):
        return module_signal(node.left)
    return None


def variable_signal(key: ast.expr | None) -> Signal | None:
    if isinstance(key, ast.Constant) and TEST_RUN_VARIABLES.match(str(key.value)):
        return Signal(
            f"{key.value!s} is set by test runs, coverage, tox or CI", runner_context=True
        )
    return None


def module_signal(key: ast.expr | None) -> Signal | None:
    """A module a test run loads and a plain interpreter does not, asked for by name.
    Test-runner names (`pytest`, `unittest`) are `harness_reference`."""
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    top = key.value.split(".", 1)[0]
    if top in PYTEST_LOADS or (
        top in sys.stdlib_module_names
        and top not in STARTUP_MODULES | COOPERATION_MODULES
        and top != "unittest"
    ):
        return Signal(f"whether {key.value} is loaded (a test run loads it)", runner_context=True)
    return None


def is_root_logger(names: Names, node: ast.expr, qualname: str, depth: int = 2) -> bool:
    """`logging.root`, `logging.getLogger()`, `logging.getLogger("")`, or a name bound
    to one: the logger pytest's capture handler hangs on."""
    if isinstance(node, ast.Name) and depth:
        values = names.bound(node.id, qualname, iterated=False)
        return any(is_root_logger(names, v, qualname, depth - 1) for v in values)  # type: ignore[arg-type]
    name = names.dotted(node.func if isinstance(node, ast.Call) else node) or ""
    if name in ("logging.root", "logging.Logger.root", "logging.RootLogger.root"):
        return True
    if isinstance(node, ast.Call) and name == "logging.getLogger":
        first = node.args[0] if node.args else None
        return first is None or (isinstance(first, ast.Constant) and first.value in ("", None))
    return False


def is_logger(names: Names, node: ast.expr, qualname: str, depth: int = 2) -> bool:
    """Any logger of `logging`'s: `hasHandlers()` looks up to the root."""
    if isinstance(node, ast.Name) and depth:
        values = names.bound(node.id, qualname, iterated=False)
        return any(is_logger(names, v, qualname, depth - 1) for v in values)  # type: ignore[arg-type]
    name = names.dotted(node.func if isinstance(node, ast.Call) else node) or ""
    return name in ("logging.getLogger", "logging.root") or is_root_logger(names, node, qualname)


# -- where a read decides -------------------------------------------------------------------


# A word every read of test-run state spells (a name, an attribute, an imported name):
# an expression without one, and without a name bound to one, holds no probe, and is
# not read further (most of a module's expressions).
SIGNAL_WORDS = frozenset(
    {"is_enabled", "gettrace", "getprofile", "get_tool", "filters", "warnoptions"}
    | {"defaultaction", "_filters_mutated", "_filters_mutated_lock_held", "_filters_version"}
    | {"_handlerList", "_handlers", "handlers", "hasHandlers", "__stdout__", "__stderr__"}
    | {"__stdin__", "unraisablehook", "__unraisablehook__", "excepthook", "__excepthook__"}
    | {"dont_write_bytecode", "pycache_prefix", "flags", "argv", "environ", "environb"}
    | {"getenv", "getenvb", "modules"}
)
_carriers: weakref.WeakKeyDictionary[Names, frozenset[str] | None] = weakref.WeakKeyDictionary()


def carriers(names: Names) -> frozenset[str] | None:
    """The names a module binds to a value that spells a read of test-run state (or
    imports such a read under), None when it spells none at all; read once per module."""
    if names in _carriers:
        return _carriers[names]
    spelt = False
    bound: set[str] = set()
    for node in ast.walk(names.tree):
        spelt = spelt or spells_signal(node)
        if isinstance(node, ast.alias) and spells_signal(node):
            bound.add(node.asname or node.name.rpartition(".")[2])
        targets, value = binding_of(node)
        if value is not None and any(map(spells_signal, ast.walk(value))):
            bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    found = frozenset(bound) if spelt else None
    _carriers[names] = found
    return found


def binding_of(node: ast.AST) -> tuple[list[ast.expr], ast.expr | None]:
    """The targets a statement, loop or `with` item binds, and what it binds them to."""
    if isinstance(node, ast.Assign):
        return node.targets, node.value
    if isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
        return [node.target], node.value
    if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
        return [node.target], node.iter
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars], node.context_expr
    return [], None


def spells_signal(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in SIGNAL_WORDS
    if isinstance(node, ast.Attribute):
        return node.attr in SIGNAL_WORDS
    if isinstance(node, ast.alias):
        return node.name.rpartition(".")[2] in SIGNAL_WORDS
    return isinstance(node, ast.Constant) and bool(PYTEST_HANDLERS.match(str(node.value)))


def probe_statement(names: Names, stmt: ast.stmt, scope: Scope) -> Iterator[Hit]:
    """The reads of test-run state that decide something in one statement's own
    expressions (the statements it holds are walked on their own)."""
    bound = carriers(names)
    if bound is None:
        return
    branches = [*stmt.body, *stmt.orelse] if isinstance(stmt, ast.If | ast.While) else []
    if branches and configures_only(names, branches, scope.qualname):
        return
    tests = isinstance(stmt, ast.If | ast.While | ast.Assert | ast.Match)
    for root in own_expressions(stmt):
        if any(spells_signal(n) or getattr(n, "id", None) in bound for n in ast.walk(root)):
            returns = isinstance(stmt, ast.Return)
            yield from probes_in(names, root, scope, tests=tests, returns=returns)


def probes_in(
    names: Names, root: ast.expr, scope: Scope, *, tests: bool, returns: bool
) -> Iterator[Hit]:
    """Each read in `root` that decides, and each name that decides bound to such a
    read: `tests`, the root is a test (whatever it computes from the read decides);
    `returns`, the root is returned (a predicate, when the read is all it returns). A
    test against a test runner's name is `harness_reference` and is left to it."""
    runner_named = any(mentions_harness(s) for s in strings_in(root))
    parents = parents_in(root)
    for node in ast.walk(root):
        signal = signal_of(names, node, scope.qualname)
        if signal is not None:
            if signal.runner_context and runner_named:
                continue
            if signal.anywhere or decides_at(node, root, parents, tests, returns, signal.text):
                yield probe_hit(f"{short(node)}: {signal.why}", node_lines(node), scope)
        elif is_read(node, parents) and decides_at(node, root, parents, tests, returns=False):
            yield from bound_probe(names, node, scope)  # type: ignore[arg-type]


def parents_in(root: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(root) for child in ast.iter_child_nodes(node)}


def is_read(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """A name whose value is read, not called: a saved hook called from its replacement
    (`lambda u: old(u)`) chains to it and decides nothing."""
    if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
        return False
    parent = parents.get(id(node))
    return not (isinstance(parent, ast.Call) and parent.func is node)


def probe_hit(detail: str, lines: frozenset[int], scope: Scope) -> Hit:
    key = (Construct.TEST_RUN_PROBE.value, scope.qualname, detail)
    return Hit(Construct.TEST_RUN_PROBE, detail, lines, key, scope.guards)


def strings_in(node: ast.AST) -> Iterator[str]:
    for part in ast.walk(node):
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            yield part.value


def mentions_harness(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in HARNESS_WORDS)


def bound_probe(names: Names, node: ast.Name, scope: Scope) -> Iterator[Hit]:
    """A name that decides, bound to a read of test-run state (`ON = ...; if ON:`, `for
    f in warnings.filters: if f[0] == "error":`). A
    read that decides where it is bound is reported there, once; a binding of the same
    scope below the test (`if x is None: x = sys.__stdout__`) is not what it tests."""
    where, values = names.binding(node.id, scope.qualname)
    if where == scope.qualname:
        values = [v for v in values if getattr(v, "lineno", 0) < node.lineno]
    for value in values:
        parents = parents_in(value)
        for part in ast.walk(value):
            signal = signal_of(names, part, scope.qualname)
            if signal is None or not signal.through_names:
                continue
            if not (signal.anywhere or decides_at(part, value, parents, False, False)):  # type: ignore[arg-type]
                # an edited binding changes what the unchanged line decides
                detail = f"{node.id} = {short(part)}: {signal.why}"
                key = (Construct.TEST_RUN_PROBE.value, scope.qualname, detail)
                guards = scope.guards | node_lines(part)
                yield Hit(Construct.TEST_RUN_PROBE, detail, node_lines(node), key, guards)
            return


def decides_at(
    node: ast.AST,
    root: ast.expr,
    parents: dict[int, ast.AST],
    tests: bool,
    returns: bool,
    text: bool = False,
) -> bool:
    """Whether the value read at `node` decides something within `root`: it reaches a
    comparison, a boolean operator, a test, arithmetic, an index or a predicate call
    before it reaches the top, which decides when it is a test, or when it is returned
    and is the read itself (`return faulthandler.is_enabled()`)."""
    if isinstance(node, ast.Compare) or (returns and node is root):
        return True  # a membership test decides by itself
    child = node
    while child is not root:
        parent = parents[id(child)]
        if isinstance(parent, ast.BoolOp | ast.BinOp) and text:
            return False  # a value picked or built, not decided on
        if isinstance(parent, ast.Compare | ast.BoolOp | ast.BinOp | ast.Lambda):
            return True  # a lambda returns what it computes
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            return True
        if isinstance(parent, ast.IfExp) and child is parent.test:
            return True
        if isinstance(parent, ast.comprehension) and child in parent.ifs:
            return True
        if isinstance(parent, ast.Subscript) and child is parent.slice:
            return True
        if is_predicate_call(parent) and child is not parent.func:  # type: ignore[attr-defined]
            return True
        child = parent
    return tests


def is_predicate_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in PREDICATES
    )


# -- honest configuration -------------------------------------------------------------------


def configures_only(names: Names, body: Sequence[ast.stmt], qualname: str) -> bool:
    """Every statement of a branch only configures logging, warnings, the fault handler
    or tracing (what an `if` on that state may honestly do)."""
    return all(configures(names, stmt, qualname) for stmt in body)


def configures(names: Names, stmt: ast.stmt, qualname: str) -> bool:
    if isinstance(stmt, ast.Pass | ast.Import | ast.ImportFrom | ast.Global | ast.Nonlocal):
        return True
    if isinstance(stmt, ast.Return):
        return stmt.value is None
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Call) and configuring_call(names, stmt.value, qualname)
    if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if all(
            isinstance(t, ast.Attribute) and t.attr in CONFIGURATION_ATTRIBUTES for t in targets
        ):
            return True
        value = stmt.value
        return isinstance(value, ast.Call) and configuring_call(names, value, qualname)
    if isinstance(stmt, ast.If):
        return configures_only(names, [*stmt.body, *stmt.orelse], qualname)
    if isinstance(stmt, ast.Try):
        handled = [s for h in stmt.handlers for s in h.body]
        return configures_only(
            names, [*stmt.body, *handled, *stmt.orelse, *stmt.finalbody], qualname
        )
    return False


def configuring_call(names: Names, call: ast.Call, qualname: str) -> bool:
    """`logging.basicConfig()`, `root.addHandler(h)`, `logging.StreamHandler()`,
    `warnings.simplefilter("default")`, `faulthandler.enable()`, `sys.settrace(old)`,
    `logger.debug(...)`."""
    func = call.func
    name = names.dotted(func) or ""
    if name.startswith(CONFIGURATION_MODULES) or name in TRACE_SETTERS:
        return True
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in LOGGER_CONFIGURATION:
        return True
    return func.attr in LOGGER_MESSAGES and is_logger(names, func.value, qualname)
