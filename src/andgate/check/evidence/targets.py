"""Which production functions the approval evidence mutates, and its mutants in the
order they run.

First the functions the edited items exercise, found by name (coverage would need a
traced run of each side; names cost nothing): in the production files the edited test
files import (`imports.imported_files`), the functions whose name the edited tests, or
the helpers and fixtures of their module they use, read as an imported name or an
attribute (a method by its name; a class's special methods when they name the class),
then, one call deeper, the functions of those files that these call.
Then the functions the change touched (a line of them it added or edited). In that
order: exercised and touched first, then exercised, then touched only.

Mutants are the discrimination report's (`mutate.mutants_of`), taken round-robin over
the functions, at most PER_FUNCTION each (those on lines the change touched first, the
rest spread over the function) and MAX_MUTANTS in all: a budget that runs out has still
tried every function once before any twice.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from andgate.check.discrimination.mutate import Mutant, functions, mutants_of
from andgate.check.evidence.imports import (
    imported_names,
    names_called,
    names_used,
    parse,
    test_functions,
)

PER_FUNCTION = 8
MAX_MUTANTS = 120
# Generated per function before choosing PER_FUNCTION of them: each mutant parses
# the whole file, so a long function must not cost seconds.
GENERATED_PER_FUNCTION = 40
SHOWN = 100  # characters of each side of a mutation's one-line diff
LONG_LINE = 48  # a mutated line longer than this is shown around what changed
CONTEXT = 16


@dataclass(frozen=True)
class Function:
    """A production function the evidence mutates, and why."""

    path: str
    name: str  # qualified: `Class.method`, `outer.inner`
    line: int
    exercised: int | None = None  # how deep an edited item names it: 0 directly, 1 a call on
    touched: frozenset[int] = field(default_factory=frozenset)  # its lines the change touched

    @property
    def rank(self) -> tuple[int, int, str, int]:
        both = self.exercised is not None and bool(self.touched)
        depth = 9 if self.exercised is None else self.exercised
        return (0 if both else 1 if self.exercised is not None else 2, depth, self.path, self.line)


def names_read_by(tree: ast.Module, edited: frozenset[str] | None) -> set[str]:
    """What the edited tests (`edited`: test function names; None: every test of the
    module) name of the code they test: the imported names they read (a local
    variable is no production function), and the attributes they read (`mod.f`,
    `obj.method`); through the module's helpers and fixtures they use, too."""
    chosen = [node for name, node in test_functions(tree) if edited is None or name in edited]
    reached = _helpers_reached(tree, chosen)
    names, attributes = names_used([*chosen, *reached])
    imported = imported_names(tree)
    return {n for n in names if imported is None or n in imported} | attributes


def _helpers_reached(tree: ast.Module, tests: list[ast.AST]) -> list[ast.AST]:
    """The module's own functions (helpers, fixtures) the tests name or take as an
    argument (a fixture), and those these name, and so on."""
    tested = {id(node) for _, node in test_functions(tree)}
    helpers = {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and id(node) not in tested
    }
    reached: dict[str, ast.AST] = {}
    frontier = list(tests)
    while frontier:
        names, _ = names_used(frontier)
        names |= {a.arg for node in frontier for a in ast.walk(node) if isinstance(a, ast.arg)}
        frontier = [helpers[n] for n in sorted(names) if n in helpers and n not in reached]
        reached.update((n.name, n) for n in frontier)  # type: ignore[attr-defined]
    return list(reached.values())


def choose_functions(
    production: Mapping[str, str],
    imported: Collection[str],
    names: Collection[str],
    touched: Mapping[str, Collection[int]],
) -> list[Function]:
    """The functions to mutate, in the order above. `production`: the text of each
    production file read (those `imported` by the edited test files, and those the
    change touched); `names`: what the edited tests name; `touched`: per production
    file, the lines of head the change added or edited."""
    found: dict[tuple[str, str], Function] = {}
    trees = {path: tree for path, text in production.items() if (tree := parse(text)) is not None}
    direct = _named(trees, imported, set(names))
    for path, name, node in direct:
        found[(path, name)] = Function(path, name, node.lineno, exercised=0)  # type: ignore[attr-defined]
    deeper = names_called(node for _, _, node in direct)
    for path, name, node in _named(trees, imported, deeper):
        found.setdefault((path, name), Function(path, name, node.lineno, exercised=1))  # type: ignore[attr-defined]
    for path, lines in touched.items():
        tree = trees.get(path)
        for name, node in functions(tree) if tree is not None else ():
            span = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))  # type: ignore[attr-defined]
            hit = frozenset(span & set(lines))
            if not hit:
                continue
            known = found.get((path, name))
            line = node.lineno  # type: ignore[attr-defined]
            exercised = None if known is None else known.exercised
            found[(path, name)] = Function(path, name, line, exercised, hit)
    return sorted(found.values(), key=lambda f: f.rank)


def _named(
    trees: Mapping[str, ast.Module], files: Collection[str], names: set[str]
) -> list[tuple[str, str, ast.AST]]:
    """(path, qualified name, node) of the functions in `files` that `names` name."""
    out = []
    for path in sorted(files):
        tree = trees.get(path)
        for name, node in functions(tree) if tree is not None else ():
            parts = name.split(".")
            special = _is_special(parts[-1])  # `__eq__` is every class's: by its owner only
            owner_named = len(parts) > 1 and parts[0] in names and special
            if (parts[-1] in names and not special) or owner_named:
                out.append((path, name, node))
    return out


def _is_special(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def mutants_for(
    chosen: Sequence[Function],
    production: Mapping[str, str],
    per_function: int = PER_FUNCTION,
    total: int = MAX_MUTANTS,
) -> list[Mutant]:
    """The mutants of the chosen functions, round-robin in their order (see above)."""
    queues = [_function_mutants(f, production.get(f.path, ""), per_function) for f in chosen]
    out: list[Mutant] = []
    for turn in range(per_function):
        for queue in queues:
            if turn < len(queue) and len(out) < total:
                out.append(queue[turn])
    return out


def _function_mutants(function: Function, text: str, count: int) -> list[Mutant]:
    every = mutants_of(function.path, text, only={function.name}, limit=GENERATED_PER_FUNCTION)
    first = [m for m in every if m.line in function.touched]
    rest = [m for m in every if m.line not in function.touched]
    return first[:count] + spread(rest, count - min(count, len(first)))


def spread(items: Sequence[Mutant], count: int) -> list[Mutant]:
    """`count` of `items` spread evenly over them, in order (all when fewer)."""
    if count <= 0:
        return []
    if len(items) <= count:
        return list(items)
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


def touched_lines(before: bytes | None, after: bytes | None) -> set[int]:
    """Lines of `after` (1-based) the change added or edited."""
    old = (before or b"").decode("utf-8", "replace").splitlines()
    new = (after or b"").decode("utf-8", "replace").splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return {
        line
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for line in range(j1 + 1, j2 + 1)
    }


def one_line(mutant: Mutant) -> str:
    """The mutation as the line before and after: "`if n < 1:` -> `if n <= 1:`"; of
    a long line, the part that changed with CONTEXT characters around it."""
    removed = " ".join(_lines(mutant.patch, b"-"))
    added = " ".join(_lines(mutant.patch, b"+"))
    old, new = _around_change(removed, added)
    return f"`{_shown(old)}` -> `{_shown(new)}`"


def _around_change(old: str, new: str) -> tuple[str, str]:
    if max(len(old), len(new)) <= LONG_LINE:
        return old, new
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    # cut at a space, so that the context starts and ends with whole words
    space = old.rfind(" ", 0, max(0, start - CONTEXT))
    cut = space + 1 if space >= 0 else 0
    space = old.find(" ", len(old) - max(0, end - CONTEXT))
    keep = len(old) - space if space >= 0 and end > CONTEXT else 0
    head, tail = ("…" if cut else ""), ("…" if keep else "")
    return (
        head + old[cut : len(old) - keep] + tail,
        head + new[cut : len(new) - keep] + tail,
    )


def _lines(patch: bytes, sign: bytes) -> list[str]:
    header = sign * 3
    return [
        line[1:].decode("utf-8", "replace").strip()
        for line in patch.splitlines()
        if line.startswith(sign) and not line.startswith(header)
    ]


def _shown(text: str) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
