"""pytest's configuration files, read exactly the way the installed pytest reads them.

The question the gate asks of a changed `setup.cfg`, `tox.ini`, `pyproject.toml` or
pytest's own files is "would pytest see a difference?". A second parser cannot answer
it: `configparser` and pytest's `iniconfig` disagree on line separators (iniconfig
splits on CR, VT, FF, NEL, U+2028/U+2029), on key case (pytest keeps it) and on
section headers (iniconfig cuts them at `;` or `#`), so a change could hide
`addopts = -p plugin` from one and show it to the other. Here the bytes of each
version are written to a private file of the same name and handed to pytest's own
`load_config_dict_from_file`. If that private function is missing or looks different,
a copy of pytest 9's rules on iniconfig and tomllib takes its place.

Anything that cannot be read with certainty (a parse error, a file too large or too
deeply nested, bytes that are not UTF-8, a shape pytest's reader trips over) is a
`problem`, and a problem on either side of a change counts as a change: fail closed.
This module runs in the gate, never in the user's pytest process.
"""

from __future__ import annotations

import inspect
import shlex
import tempfile
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import iniconfig

# A private function whose signature varies between pytest versions: checked before use.
_pytest_loader: Callable[..., Any] | None
try:
    from _pytest.config import findpaths as _findpaths

    _pytest_loader = _findpaths.load_config_dict_from_file
except Exception:  # an older or newer pytest: the fallback below reads instead
    _pytest_loader = None
try:
    # pytest's `fail()` raises Failed, a BaseException: caught, unlike KeyboardInterrupt.
    from _pytest.outcomes import OutcomeException as _Outcome

    _READ_ERRORS: tuple[type[BaseException], ...] = (Exception, _Outcome)
except Exception:
    _READ_ERRORS = (Exception,)

#: The names pytest discovers, in the order pytest 9's `locate_config` tries them.
CANDIDATES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
#: Files only pytest reads: every byte of them is pytest configuration.
PYTEST_ONLY = frozenset({"pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"})
MAX_BYTES = 1 << 20
MAX_DEPTH = 64
MAX_PROBLEM = 200
CFG_PYTEST_SECTION = (
    "[pytest] section in setup.cfg files is no longer supported, change to [tool:pytest] instead."
)

Setting = tuple[str, str, Any]  # (key, mode, value): mode is pytest's "ini" or "toml"


@dataclass(frozen=True)
class Reading:
    """One version of one file as pytest reads it.

    `used` is False when pytest would not take its configuration from the file (no
    pytest section or table, or no file); `settings` are pytest's (key, mode, value)
    triples, sorted; `andgate` is pyproject.toml's `[tool.andgate]` table. A reading
    with a `problem` is neither used nor unused: the gate cannot know.
    """

    used: bool = False
    settings: tuple[Setting, ...] = ()
    andgate: Any = None
    problem: str | None = None

    def value(self, key: str) -> Setting | None:
        return next((s for s in self.settings if s[0] == key), None)

    def same_as(self, other: Reading) -> bool:
        # repr, not ==: True == 1 and 1 == 1.0, but pytest tells them apart.
        return (self.used, repr(self.settings), repr(self.andgate)) == (
            other.used,
            repr(other.settings),
            repr(other.andgate),
        )


class Unreadable(ValueError):
    """A config file whose settings cannot be read; the message says why."""


Reader = Callable[[str, "bytes | None"], Reading]


def pytest_reader_available() -> bool:
    if _pytest_loader is None:
        return False
    try:
        return len(inspect.signature(_pytest_loader).parameters) == 1
    except (TypeError, ValueError):
        return False


def read(name: str, data: bytes | None) -> Reading:
    """`data` (the bytes of a file called `name`) as the installed pytest reads it."""
    reader = read_with_pytest if pytest_reader_available() else read_with_fallback
    return reader(name, data)


def read_with_pytest(name: str, data: bytes | None) -> Reading:
    # Chosen only when pytest_reader_available(); a None here would fail as a problem.
    return _read(name, data, _pytest_loader)  # type: ignore[arg-type]


def read_with_fallback(name: str, data: bytes | None) -> Reading:
    return _read(name, data, _fallback_loader)


def _read(name: str, data: bytes | None, loader: Callable[[Path], Any]) -> Reading:
    name = PurePosixPath(name).name
    if data is None or name not in CANDIDATES:
        return Reading()
    if len(data) > MAX_BYTES:
        return Reading(problem=f"too large to read safely ({len(data)} bytes, limit {MAX_BYTES})")
    with tempfile.TemporaryDirectory(prefix="andgate-config-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            loaded = loader(path)
            andgate = _andgate_table(path) if name == "pyproject.toml" else None
            return Reading(loaded is not None, _settings(loaded), _plain(andgate))
        except _READ_ERRORS as exc:  # every failure to read fails closed
            return Reading(problem=_describe(exc, folder))


def _describe(exc: BaseException, folder: str) -> str:
    text = str(exc) or type(exc).__name__
    text = text.replace(folder + "/", "").replace(folder, "")
    if isinstance(exc, RecursionError):
        text = "nested too deeply"
    elif isinstance(exc, UnicodeDecodeError):
        text = f"not UTF-8 (byte {exc.start}: {exc.object[exc.start : exc.start + 1]!r})"
    elif isinstance(exc, MemoryError):
        text = "too large to read safely"
    elif isinstance(exc, AttributeError | TypeError | KeyError):
        text = f"a table pytest expects is not a table ({text})"
    line = " ".join(text.split())
    return line if len(line) <= MAX_PROBLEM else line[: MAX_PROBLEM - 3] + "..."


def _settings(loaded: Any) -> tuple[Setting, ...]:
    if loaded is None:
        return ()
    if not isinstance(loaded, Mapping):
        raise TypeError(f"pytest's reader returned {type(loaded).__name__}")
    out = []
    for key, item in loaded.items():
        # pytest 9: ConfigValue(value, mode=...); pytest 8 returned bare values.
        mode = getattr(item, "mode", "ini")
        out.append((str(key), str(mode), _plain(getattr(item, "value", item))))
    return tuple(sorted(out, key=lambda s: s[0]))


def _plain(value: Any, depth: int = 0) -> Any:
    """Comparable plain data: lists stay lists, tables become key-sorted dicts."""
    if depth > MAX_DEPTH:
        raise RecursionError
    if isinstance(value, Mapping):
        return {str(k): _plain(value[k], depth + 1) for k in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    return value


def _toml_document(path: Path) -> dict[str, Any]:
    # pytest reads TOML with read_text: universal newlines, so a lone CR ends a line.
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _andgate_table(path: Path) -> Any:
    tool = _toml_document(path).get("tool", {})
    if not isinstance(tool, dict):
        raise AttributeError("'tool' is not a table")
    return tool.get("andgate")


# -- the fallback: pytest 9's rules, on iniconfig and tomllib ----------------------------


def _fallback_loader(path: Path) -> dict[str, _Value] | None:
    """What pytest 9.2's `load_config_dict_from_file` returns, as {key: (mode, value)}."""
    name = path.name
    if name.endswith(".toml"):
        try:
            doc = _toml_document(path)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: {exc}") from exc  # as pytest's UsageError says it
        return _fallback_toml(name, doc)
    text = path.read_text(encoding="utf-8")  # universal newlines, as iniconfig's open()
    ini = iniconfig.IniConfig(str(path), data=text)
    sections = ini.sections
    if name == "setup.cfg":
        if "tool:pytest" in sections:
            return _ini_mode(sections["tool:pytest"])
        if "pytest" in sections:
            raise _Failed(CFG_PYTEST_SECTION)
        return None
    if "pytest" in sections:
        return _ini_mode(sections["pytest"])
    return {} if name in PYTEST_ONLY else None


class _Failed(Exception):
    """What pytest's `fail(..., pytrace=False)` stands for in the fallback."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


@dataclass(frozen=True)
class _Value:
    value: Any
    mode: str


def _ini_mode(section: Mapping[str, Any]) -> dict[str, _Value]:
    return {k: _Value(v, "ini") for k, v in section.items()}


def _fallback_toml(name: str, doc: dict[str, Any]) -> dict[str, _Value] | None:
    if name != "pyproject.toml":
        if "pytest" in doc:
            return {k: _Value(v, "toml") for k, v in doc["pytest"].items()}
        top = [key for key, value in doc.items() if not isinstance(value, dict)]
        if top:
            raise ValueError(
                f"pytest configuration must be under a [pytest] table "
                f"(found top-level options: {', '.join(top)})"
            )
        return {}
    tool_pytest = doc.get("tool", {}).get("pytest", {})
    toml_config = {k: v for k, v in tool_pytest.items() if k != "ini_options"}
    ini_config = tool_pytest.get("ini_options", None)
    if toml_config and ini_config:
        raise ValueError(
            "Cannot use both [tool.pytest] (native TOML types) and "
            "[tool.pytest.ini_options] (string-based INI format) simultaneously."
        )
    if toml_config:
        return {k: _Value(v, "toml") for k, v in toml_config.items()}
    if ini_config is not None:
        return {
            k: _Value(v if isinstance(v, list) else str(v), "ini") for k, v in ini_config.items()
        }
    return None


# -- what the gate asks ------------------------------------------------------------------


def change(path: str, old: bytes | None, new: bytes | None, reader: Reader = read) -> str | None:
    """None when pytest sees no difference between two versions of a config file;
    otherwise a one-line reason."""
    if old == new:
        return None
    name = PurePosixPath(path).name
    before, after = reader(name, old), reader(name, new)
    for side, reading in (("at head", after), ("at base", before)):
        if reading.problem is not None:
            return f"pytest cannot read it {side}: {reading.problem}"
    if not before.used and after.used:
        return "pytest would now read it as its config file"
    if before.used and not after.used:
        return "pytest would no longer read it as its config file"
    keys = _differing_keys(before, after)
    if keys:
        return f"pytest settings differ ({', '.join(keys)})"
    if repr(before.andgate) != repr(after.andgate):
        return "its [tool.andgate] table differs"
    if name in PYTEST_ONLY:
        return f"{name} changed (pytest reads all of it)"
    return None


def _differing_keys(before: Reading, after: Reading) -> list[str]:
    keys = {s[0] for s in before.settings} | {s[0] for s in after.settings}
    return sorted(k for k in keys if repr(before.value(k)) != repr(after.value(k)))


def chosen(files: Mapping[str, bytes | None], reader: Reader = read) -> str | None:
    """The name pytest would pick as its config file among one folder's files.

    As pytest 9's `locate_config`: the first candidate, in `CANDIDATES` order, that
    pytest takes configuration from (a file it cannot read stops the search there,
    as pytest stops with an error); else a pyproject.toml without pytest tables;
    else none.
    """
    for name in CANDIDATES:
        data = files.get(name)
        if data is None:
            continue
        reading = reader(name, data)
        if reading.used or reading.problem is not None:
            return name
    return "pyproject.toml" if files.get("pyproject.toml") is not None else None


def _setting(name: str, data: bytes | None, key: str) -> Setting | None:
    reading = read(name, data)
    if reading.problem is not None:
        raise Unreadable(f"{name}: {reading.problem}")
    return reading.value(key)


def testpaths(name: str, data: bytes | None) -> tuple[str, ...]:
    """The file's `testpaths` as pytest reads it (ini mode: a whitespace-split
    string; toml mode: a list). Raises Unreadable when the file cannot be read."""
    return _list_setting(name, data, "testpaths")


def pythonpath(name: str, data: bytes | None) -> tuple[str, ...]:
    """The file's `pythonpath` (folders pytest puts first on `sys.path`, relative to
    the file's folder), read as `testpaths`. Raises Unreadable as it does."""
    return _list_setting(name, data, "pythonpath")


def _list_setting(name: str, data: bytes | None, key: str) -> tuple[str, ...]:
    setting = _setting(name, data, key)
    if setting is None:
        return ()
    _, mode, value = setting
    if mode == "ini" and isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    raise Unreadable(f"{name}: {key} must be a list of strings, got {value!r}")


def markers(name: str, data: bytes | None) -> tuple[str, ...]:
    """The file's `markers` lines (`name: description`), as pytest reads them.
    Raises Unreadable when the file cannot be read."""
    setting = _setting(name, data, "markers")
    if setting is None:
        return ()
    _, _, value = setting
    if isinstance(value, str):
        return tuple(line.strip() for line in value.splitlines() if line.strip())
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    raise Unreadable(f"{name}: markers must be a list of strings, got {value!r}")


# -- what the gate's pytest processes and the test side use -------------------------------


def root_config_file(folder: Path) -> str | None:
    """The config file pytest would use in `folder` itself (never one above it).
    A link that leads out of the folder is not the folder's config."""
    real = folder.resolve()
    files = {}
    for name in CANDIDATES:
        path = folder / name
        if path.is_file() and path.resolve().is_relative_to(real):
            files[name] = path.read_bytes()
    return chosen(files)


def tree_testpaths(files: Mapping[str, bytes]) -> tuple[str, ...]:
    """`testpaths` of the config file pytest would pick among a tree's root files;
    nothing when pytest could not read it (then no folder is added to the test side)."""
    return _tree_setting(files, testpaths)


def tree_pythonpath(files: Mapping[str, bytes]) -> tuple[str, ...]:
    """`pythonpath` of the config file pytest would pick among a tree's root files;
    nothing when pytest could not read it."""
    return _tree_setting(files, pythonpath)


def _tree_setting(
    files: Mapping[str, bytes], setting: Callable[[str, bytes | None], tuple[str, ...]]
) -> tuple[str, ...]:
    name = chosen(files)
    if name is None:
        return ()
    try:
        return setting(name, files[name])
    except Unreadable:
        return ()


def starts_xdist(args: Sequence[str]) -> bool:
    """Whether these pytest arguments start pytest-xdist workers: `-n 2`, `-nauto`,
    `--numprocesses=4`, `--tx ...` (`-n 0` runs no worker). As in argparse, the last
    `-n` wins (PYTEST_ADDOPTS `-n 0` after a config file's `-n 2`)."""
    workers, tx = False, False
    for i, arg in enumerate(args):
        if arg in ("-n", "--numprocesses"):
            workers = i + 1 < len(args) and args[i + 1] != "0"
        elif arg == "--tx" or arg.startswith("--tx="):
            tx = True
        elif arg.startswith("--numprocesses="):
            workers = arg.partition("=")[2] != "0"
        elif arg.startswith("-n") and not arg.startswith("--") and len(arg) > 2:
            workers = arg[2:] not in ("0", "=0")
    return workers or tx


def tree_runs_xdist(files: Mapping[str, bytes], environ_addopts: str = "") -> bool:
    """Whether pytest, started in a tree with these root files, runs xdist workers
    (the config file's `addopts`, then PYTEST_ADDOPTS). Unreadable: no."""
    args: list[str] = []
    name = chosen(files)
    try:
        setting = None if name is None else _setting(name, files[name], "addopts")
        if setting is not None:
            value = setting[2]
            args += shlex.split(value) if isinstance(value, str) else [str(v) for v in value]
        args += shlex.split(environ_addopts)
    except (Unreadable, ValueError):
        return False
    return starts_xdist(args)
