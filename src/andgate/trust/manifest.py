"""The trust manifest: schema declared as data, validated strictly.

Unknown keys are errors, not warnings: a typo such as `oracel:` must never
silently drop a class and open the gate. Every missing optional key takes the
strict default. Validated data becomes frozen dataclasses.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

import yaml

from andgate.errors import ManifestError
from andgate.records import Construct

DEFAULT_MANIFEST = "tests/trust_manifest.yaml"
REQUIRED = object()


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (no billion-laughs) and duplicate keys, and
    reads a date-like scalar that is no real date (2026-13-01) as the string it is,
    so quoted and unquoted dates meet the same validation."""

    def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]  # unannotated in types-PyYAML
            raise yaml.constructor.ConstructorError(
                None, None, "YAML aliases (*name) are not allowed here", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue  # the base class reports an unhashable key
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_timestamp(self, node):  # type: ignore[no-untyped-def]
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)


StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", StrictLoader.construct_yaml_timestamp)


def load_yaml(text: bytes | str, source: str, error: type[Exception]) -> Any:
    """Parse YAML safely; any problem becomes one line naming `source`."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return yaml.load(text, Loader=StrictLoader)
    except UnicodeDecodeError as exc:
        raise error(f"{source}: not UTF-8 text ({exc.reason}); save it as UTF-8") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        if context:
            problem = f"{context}, {problem}"  # "expected a single document in the stream, ..."
        raise error(f"{source}: invalid YAML{where}: {problem}; fix the syntax") from exc
    except RecursionError as exc:
        raise error(f"{source}: invalid YAML: nested too deeply; flatten it") from exc
    except (ValueError, TypeError, OverflowError) as exc:
        # PyYAML's constructors raise these for values such as `!!int x`.
        raise error(f"{source}: invalid YAML: {exc}; fix the value") from exc


# -- schema as data -------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    name: str
    check: Callable[[Any, str, str], Any]
    default: Any = REQUIRED


def _bool(value: Any, source: str, field: str) -> bool:
    if not isinstance(value, bool):
        raise ManifestError(f"{source}: {field} must be true or false, got {value!r}")
    return value


def _positive_int(value: Any, source: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ManifestError(f"{source}: {field} must be a whole number >= 1, got {value!r}")
    return value


def _version(value: Any, source: str, field: str) -> int:
    if type(value) is not int or value != 1:
        raise ManifestError(
            f"{source}: {field} must be 1 (the only manifest version), got {value!r}"
        )
    return 1


def _relpath(value: Any, source: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"{source}: {field} must be a path relative to the repository root")
    path = PurePosixPath(value.strip())
    if path.is_absolute() or ".." in path.parts or "\\" in value:
        raise ManifestError(
            f"{source}: {field} {value!r} must be a relative path inside the repository, using '/'"
        )
    return str(path)


def _str_list(value: Any, source: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ManifestError(
            f'{source}: {field} must be a list of non-empty strings, e.g. ["a", "b"]'
        )
    return tuple(v.strip() for v in value)


def _globs(value: Any, source: str, field: str) -> tuple[str, ...]:
    globs = _str_list(value, source, field)
    for glob in globs:
        if glob.startswith("/") or ".." in glob.split("/"):
            raise ManifestError(
                f"{source}: {field} glob {glob!r} must be relative to the repository root"
            )
    return globs


def _nonempty_globs(value: Any, source: str, field: str) -> tuple[str, ...]:
    globs = _globs(value, source, field)
    if not globs:
        raise ManifestError(
            f"{source}: {field} is empty; list at least one glob (an empty oracle class blocks)"
        )
    return globs


APPROVAL_SOURCES = ("cli", "env", "github-reviews")


def _approval_sources(value: Any, source: str, field: str) -> tuple[str, ...]:
    """Where an owner's approval may come from; a project that gates in CI can
    refuse the command line and environment, which whoever edits the workflow sets."""
    names = _str_list(value, source, field)
    unknown = [n for n in names if n not in APPROVAL_SOURCES]
    if unknown:
        raise ManifestError(
            f"{source}: {field} has unknown source {unknown[0]!r}; "
            f"valid sources: {', '.join(APPROVAL_SOURCES)}"
        )
    return tuple(dict.fromkeys(names))


def _scan_allow(value: Any, source: str, field: str) -> Mapping[str, frozenset[Construct]]:
    """`{glob: [construct, ...]}`: the constructs the production scan allows under a glob."""
    if not isinstance(value, Mapping):
        raise ManifestError(
            f"{source}: {field} must map path globs to lists of constructs, "
            'e.g. {"src/myplugin/**": [harness_reference]}'
        )
    valid = ", ".join(c.value for c in Construct)
    allow = {}
    for glob, names in value.items():
        if not isinstance(glob, str):
            raise ManifestError(f"{source}: {field} key {glob!r} must be a path glob string")
        (glob,) = _globs([glob], source, f"{field} key")
        where = f"{field}[{glob!r}]"
        constructs = _str_list(names, source, where)
        unknown = [n for n in constructs if n not in Construct.__members__.values()]
        if unknown:
            raise ManifestError(
                f"{source}: {where}: unknown construct {unknown[0]!r}; valid names: {valid}"
            )
        allow[glob] = frozenset(Construct(n) for n in constructs)
    return MappingProxyType(allow)


def _mapping(schema: tuple[Key, ...]) -> Callable[[Any, str, str], dict[str, Any]]:
    def check(value: Any, source: str, field: str) -> dict[str, Any]:
        return validate_mapping(value, schema, source, field)

    return check


ORACLE_SCHEMA = (
    Key("require_human_owner", _bool, True),
    Key("globs", _nonempty_globs),
    Key("markers", _str_list, ()),
)
PROPERTY_SCHEMA = (
    Key("require_accepted_invariant", _bool, True),
    Key("globs", _globs, ()),
    Key("markers", _str_list, ()),
    Key("invariants_file", _relpath, "tests/properties/INVARIANTS.md"),
)
FLAKE_SCHEMA = (
    Key("freeze_file", _relpath, "tests/flakes/freeze.yaml"),
    Key("globs", _globs, ()),
    Key("markers", _str_list, ()),
)
PRODUCTION_SCAN_SCHEMA = (Key("allow", _scan_allow, {}),)
CLASSES_SCHEMA = (
    Key("oracle", _mapping(ORACLE_SCHEMA)),
    Key("property", _mapping(PROPERTY_SCHEMA), {}),
    Key("frozen_flake", _mapping(FLAKE_SCHEMA), {}),
)
APPROVALS_SCHEMA = (Key("sources", _approval_sources, APPROVAL_SOURCES),)
MANIFEST_SCHEMA = (
    Key("version", _version),
    Key("classes", _mapping(CLASSES_SCHEMA)),
    Key("fail_closed_untrusted", _bool, True),
    Key("oracle_must_fail_known_bad", _bool, True),
    Key("known_bad_dir", _relpath, "tests/oracles/known_bad"),
    Key("owners", _str_list, ()),
    Key("production_globs", _globs, ()),
    Key("lock_file", _relpath, "tests/oracles/locks.sha256"),
    Key("fixtures_dir", _relpath, "tests/oracles/fixtures"),
    Key("max_freeze_days", _positive_int, 28),
    Key("require_property_class", _bool, True),
    Key("test_support_globs", _globs, ()),
    Key("scrub_env", _str_list, ()),
    Key("require_discriminating_tests", _bool, False),
    Key("block_weakened_oracles", _bool, False),
    Key("approvals", _mapping(APPROVALS_SCHEMA), {}),
    Key("generated_files", _globs, ()),
    Key("trust_root_globs", _globs, ()),
    Key("disputes_file", _relpath, ".andgate/disputes.yaml"),
    Key("production_scan", _mapping(PRODUCTION_SCAN_SCHEMA), {}),
)


def validate_mapping(
    value: Any, schema: tuple[Key, ...], source: str, where: str
) -> dict[str, Any]:
    """Check `value` against `schema`; return a dict with defaults filled in.

    `where` is the dotted path of the mapping ("" at the top level), so every
    message names the exact key: "classes.oracle.globs".
    """
    under = f" under {where}" if where else ""
    if value is None and where:
        value = {}
    if not isinstance(value, Mapping):
        place = where or "the manifest"
        raise ManifestError(f"{source}: {place} must be a mapping of keys to values")
    known = {key.name: key for key in schema}
    for name in value:
        if name not in known:
            hint = difflib.get_close_matches(str(name), known, n=1)
            fix = f"did you mean {hint[0]!r}?" if hint else f"allowed keys: {', '.join(known)}"
            raise ManifestError(f"{source}: unknown key {name!r}{under}; {fix}")
    result = {}
    for key in schema:
        field = f"{where}.{key.name}" if where else key.name
        if key.name in value:
            result[key.name] = key.check(value[key.name], source, field)
        elif key.default is REQUIRED:
            raise ManifestError(f"{source}: required key {key.name!r} is missing{under}; add it")
        elif isinstance(key.default, dict):
            result[key.name] = key.check(key.default, source, field)
        else:
            result[key.name] = key.default
    return result


# -- validated manifest -------------------------------------------------------------


@dataclass(frozen=True)
class OracleClass:
    require_human_owner: bool
    globs: tuple[str, ...]
    markers: tuple[str, ...]


@dataclass(frozen=True)
class PropertyClass:
    require_accepted_invariant: bool
    globs: tuple[str, ...]
    markers: tuple[str, ...]
    invariants_file: str


@dataclass(frozen=True)
class FlakeClass:
    freeze_file: str
    globs: tuple[str, ...]
    markers: tuple[str, ...]


@dataclass(frozen=True)
class Manifest:
    path: str
    oracle: OracleClass
    property: PropertyClass
    frozen_flake: FlakeClass
    fail_closed_untrusted: bool
    oracle_must_fail_known_bad: bool
    known_bad_dir: str
    owners: tuple[str, ...]
    production_globs: tuple[str, ...]
    lock_file: str
    fixtures_dir: str
    max_freeze_days: int
    require_property_class: bool
    test_support_globs: tuple[str, ...] = ()
    scrub_env: tuple[str, ...] = ()
    require_discriminating_tests: bool = False
    # true: ORACLE_WEAKENED blocks unless an owner approved head itself
    block_weakened_oracles: bool = False
    # where owners' approvals may come from (cli, env, github-reviews)
    approval_sources: tuple[str, ...] = APPROVAL_SOURCES
    # whether the manifest lists `approvals.sources` itself: under CI, `--approved-by`
    # counts only when it does (a default never opens the command line to a workflow edit)
    approval_sources_listed: bool = False
    # untracked install outputs tests need (a generated _version.py): copied into worktrees
    generated_files: tuple[str, ...] = ()
    # more files a change may not touch without an owner
    trust_root_globs: tuple[str, ...] = ()
    # where a change disputes an oracle item (test side, written by the change)
    disputes_file: str = ".andgate/disputes.yaml"
    # path glob -> constructs the production scan allows there (`production_scan.allow`)
    production_scan_allow: Mapping[str, frozenset[Construct]] = field(
        default_factory=lambda: MappingProxyType({})
    )


def _check_lock_outside_fixtures(lock_file: str, fixtures_dir: str, source: str) -> None:
    """A lock inside the folder it locks would have to contain its own hash."""
    if lock_file == fixtures_dir or lock_file.startswith(fixtures_dir.rstrip("/") + "/"):
        raise ManifestError(
            f"{source}: lock_file {lock_file!r} is inside fixtures_dir {fixtures_dir!r}; "
            "move the lock file out of the folder it locks"
        )


def _lists_sources(data: Mapping[str, Any]) -> bool:
    approvals = data.get("approvals")
    return isinstance(approvals, Mapping) and "sources" in approvals


def _check_disputes_file(
    fields: Mapping[str, Any], classes: Mapping[str, Any], path: str, source: str
) -> None:
    """The disputes file is written by changes: it must not be a trust file, a folder a
    lock or a replay reads, or Python that pytest could import."""
    disputes = fields["disputes_file"]
    trust_files = {
        path,
        fields["lock_file"],
        classes["frozen_flake"]["freeze_file"],
        classes["property"]["invariants_file"],
    }
    folders = (fields["fixtures_dir"], fields["known_bad_dir"])
    if (
        disputes in trust_files
        or any(disputes == f or disputes.startswith(f.rstrip("/") + "/") for f in folders)
        or PurePosixPath(disputes).suffix in (".py", ".ini", ".cfg", ".toml")
    ):
        raise ManifestError(
            f"{source}: disputes_file {disputes!r} names a trust file or a file pytest reads; "
            "give it a YAML file of its own, e.g. .andgate/disputes.yaml"
        )


def parse_manifest(text: bytes | str | None, path: str, source: str | None = None) -> Manifest:
    """Validate manifest text; `source` names it in messages (default: `path`)."""
    source = source or path
    if text is None:
        raise ManifestError(
            f"{source}: manifest not found; create it (andgate init) or pass --manifest PATH"
        )
    data = load_yaml(text, source, ManifestError)
    if data is None:
        raise ManifestError(f"{source}: manifest is empty; it needs at least version and classes")
    fields = validate_mapping(data, MANIFEST_SCHEMA, source, "")
    classes = fields.pop("classes")
    fields.pop("version")
    approvals = fields.pop("approvals")
    fields["production_scan_allow"] = fields.pop("production_scan")["allow"]
    _check_lock_outside_fixtures(fields["lock_file"], fields["fixtures_dir"], source)
    _check_disputes_file(fields, classes, path, source)
    return Manifest(
        path=path,
        oracle=OracleClass(**classes["oracle"]),
        property=PropertyClass(**classes["property"]),
        frozen_flake=FlakeClass(**classes["frozen_flake"]),
        approval_sources=approvals["sources"],
        approval_sources_listed=_lists_sources(data),
        **fields,
    )
