"""Production-side evasions the scan names (issue 28): what Python runs must be what
the scan read. A declared source encoding, a symlink, a pytest hook or plugin
registration, a write to the process environment or to a system file. Pure: no git,
no pytest processes."""

from __future__ import annotations

import pytest

from andgate.check.production.common import FileChange, decode
from andgate.check.production.scan import scan_production
from andgate.records import Construct
from test_scan import assert_only, scan

C = Construct

# `+AAo-` is a line break in UTF-7: read as UTF-8, lines 2-4 are one comment line.
UTF7_CHEAT = b"# coding: utf-7\nx = 1  # +AAo-import sys+AAo-UNDER = 'pytest' in sys.modules\n"


def test_a_file_is_read_in_its_declared_encoding() -> None:
    assert decode(UTF7_CHEAT).splitlines()[1:] == [
        "x = 1  # ",
        "import sys",
        "UNDER = 'pytest' in sys.modules",
    ]


def test_a_construct_hidden_by_a_utf7_declaration_is_found_with_the_declaration() -> None:
    assert_only(scan(UTF7_CHEAT), (1, C.SOURCE_ENCODING), (4, C.HARNESS_REFERENCE))


def test_a_construct_hidden_by_a_utf7_declaration_is_found_when_only_it_is_added() -> None:
    old = b"# coding: utf-7\nx = 1\n"
    assert_only(scan(UTF7_CHEAT, old), (4, C.HARNESS_REFERENCE))


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("# -*- coding: latin-1 -*-\nX = 1\n", 1),
        ("#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nX = 1\n", 2),
        ("# coding: utf-7\nX = 1\n", 1),
    ],
)
def test_a_declared_encoding_other_than_utf8_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.SOURCE_ENCODING))


@pytest.mark.parametrize(
    "code",
    [
        "# -*- coding: utf-8 -*-\nX = 1\n",
        "# coding=UTF8\nX = 1\n",
        "# -*- coding: ascii -*-\nX = 1\n",
        "\ufeffX = 1\n",
    ],
)
def test_utf8_and_ascii_declarations_are_not_found(code: str) -> None:
    assert scan(code) == []


def test_an_encoding_base_already_declared_is_not_found_again() -> None:
    old = "# -*- coding: latin-1 -*-\nX = 1\n"
    assert scan("# -*- coding: latin-1 -*-\nX = 2\n", old) == []


def symlink(target: bytes, old: bytes | None = None, *, old_mode: str = "100644") -> FileChange:
    return FileChange(
        "src/pkg/core.py",
        old,
        target,
        old_mode=old_mode if old is not None else None,
        new_mode="120000",
    )


def scan_changes(*changes: FileChange) -> list[tuple[int | None, Construct]]:
    found = scan_production(changes, shadowed=frozenset(), project_packages=frozenset({"pkg"}))
    return [(f.line, f.construct) for f in found]


def test_an_added_symlink_is_found_and_its_target_is_not_read_as_code() -> None:
    assert scan_changes(symlink(b"../../notes/cheat.txt")) == [(None, C.SYMLINK)]


def test_a_file_turned_into_a_symlink_is_found() -> None:
    assert scan_changes(symlink(b"other.py", b"X = 1\n")) == [(None, C.SYMLINK)]


def test_a_symlink_retargeted_is_found_and_an_unchanged_one_is_not() -> None:
    assert scan_changes(symlink(b"b.py", b"a.py", old_mode="120000")) == [(None, C.SYMLINK)]
    unchanged = FileChange("src/pkg/core.py", b"a.py", b"a.py", None, "120000", "100755")
    assert scan_changes(unchanged) == []


def test_an_allowed_symlink_is_not_found() -> None:
    found = scan_production(
        [symlink(b"x.py")],
        shadowed=frozenset(),
        project_packages=frozenset(),
        allow={"src/pkg/**": frozenset({C.SYMLINK})},
    )
    assert found == []


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("def pytest_runtest_makereport(item, call):\n    pass\n", 1),
        ("class P:\n    def pytest_collection_modifyitems(self, items):\n        pass\n", 2),
        ("pytest_plugins = ['pkg.helpers']\n", 1),
        ("import pluggy\nhookimpl = pluggy.HookimplMarker('pytest')\n", 2),
    ],
)
def test_a_pytest_hook_or_plugin_registration_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.PYTEST_PLUGIN))


def test_a_pytest_hook_marker_is_found_beside_the_import() -> None:
    code = "import pytest\n\n@pytest.hookimpl(wrapper=True)\ndef report(item):\n    yield\n"
    assert_only(scan(code), (1, C.HARNESS_REFERENCE), (3, C.PYTEST_PLUGIN))


def test_a_project_that_is_a_pytest_plugin_keeps_working_with_an_allow_entry() -> None:
    code = "def pytest_configure(config):\n    pass\n"
    allow = {"src/pkg/plugin.py": frozenset({C.PYTEST_PLUGIN})}
    assert scan(code, path="src/pkg/plugin.py", allow=allow) == []
    assert_only(scan(code, path="src/pkg/core.py", allow=allow), (1, C.PYTEST_PLUGIN))


def test_a_hook_base_already_had_is_not_found_when_its_body_changes() -> None:
    old = "def pytest_configure(config):\n    pass\n"
    assert scan("def pytest_configure(config):\n    config.x = 1\n", old) == []


@pytest.mark.parametrize(
    "code",
    [
        "def test_helper():\n    pass\n",
        "import pluggy\nhookimpl = pluggy.HookimplMarker('tox')\n",
        "from myapp import hookimpl\n@hookimpl\ndef startup():\n    pass\n",
        "PYTEST_ARGS = ['-q']\n",
    ],
)
def test_near_misses_are_not_pytest_plugins(code: str) -> None:
    assert [f for f in scan(code) if f.construct is C.PYTEST_PLUGIN] == []


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("import os\nos.environ['API_TOKEN'] = 'fake-token'\n", 2),
        ("import os\ndef login():\n    os.environ.setdefault('API_TOKEN', 'x')\n", 3),
        ("import os\nos.environ.update({'API_TOKEN': 'x'})\n", 2),
        ("import os\nos.putenv('API_TOKEN', 'x')\n", 2),
        ("from os import environ\nenviron['API_TOKEN'] = 'x'\n", 2),
        ("import os as o\no.environb[b'API_TOKEN'] = b'x'\n", 2),
        ("import os\nos.environ |= {'API_TOKEN': 'x'}\n", 2),
    ],
)
def test_an_environment_write_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.ENVIRONMENT_WRITE))


@pytest.mark.parametrize(
    "code",
    [
        "import os\nTOKEN = os.environ.get('API_TOKEN')\n",
        "import os\nTOKEN = os.environ['API_TOKEN']\n",
        "import os\nenv = dict(os.environ)\nenv['API_TOKEN'] = 'x'\n",
        "import os\ndef f(env):\n    env.update(os.environ)\n",
    ],
)
def test_reading_or_copying_the_environment_is_not_a_write(code: str) -> None:
    assert scan(code) == []


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("with open('/etc/hosts', 'a') as fh:\n    fh.write('127.0.0.1 api')\n", 1),
        ("from pathlib import Path\nPath('/etc/hosts').write_text('127.0.0.1 api')\n", 2),
        ("from pathlib import Path\n(Path('/etc') / 'hosts').open('w')\n", 2),
        ("import os\nfd = os.open('/etc/hosts', os.O_WRONLY | os.O_APPEND)\n", 2),
        ("import shutil\nshutil.copy('stub', '/etc/resolv.conf')\n", 2),
        ("import io\ndef f():\n    io.open(f'/etc/{NAME}', mode='w')\n", 3),
    ],
)
def test_a_system_file_write_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.SYSTEM_FILE_WRITE))


@pytest.mark.parametrize(
    "code",
    [
        "HOSTS = open('/etc/hosts').read()\n",
        "open('/dev/null', 'w')\n",
        "def f(path):\n    open(path, 'w')\n",
        "open('relative/out.txt', 'w')\n",
        "from pathlib import Path\nPath('/etc/hosts').read_text()\n",
    ],
)
def test_reads_devices_and_relative_paths_are_not_system_writes(code: str) -> None:
    assert scan(code) == []


def test_a_script_that_rewrites_etc_hosts_is_found() -> None:
    script = "#!/bin/sh\necho '127.0.0.1 api.example.com' | sudo tee -a /etc/hosts\n"
    assert_only(scan(script, path="scripts/stub"), (2, C.SYSTEM_FILE_WRITE))
    assert_only(scan("echo x >> /etc/hosts\n", path="ci/x.sh"), (1, C.SYSTEM_FILE_WRITE))
    assert scan("RUN echo x >> /etc/hosts\n", path="Dockerfile") == []
