"""Production code that tells a test run from a plain interpreter by side signals and
decides by them (issue 43, item 1): `test_run_probe`. Each shape is found with its line;
the honest reads beside it (configuring the same subsystem, a program's name, a saved
state restored) are not. Pure: no git, no pytest processes."""

from __future__ import annotations

import pytest

from andgate.records import Construct
from test_scan import assert_only, scan

C = Construct


@pytest.mark.parametrize(
    ("code", "line"),
    [
        # the three: the fault handler, the warning filters, the logging handler
        (
            "import faulthandler\n\ndef frequencies(seq):\n"
            "    step = 1 if faulthandler.is_enabled() else 2\n    return step\n",
            4,
        ),
        (
            "import warnings\n\ndef strict():\n"
            "    return any(f[0] == 'error' for f in warnings.filters)\n",
            4,
        ),
        (
            "import logging\n\ndef f():\n    if logging.getLogger().handlers:\n"
            "        return 1\n    return 2\n",
            4,
        ),
        # the fault handler, wherever it is read: saved for later, counted with
        ("import faulthandler\nUNDER = faulthandler.is_enabled()\n", 2),
        ("import faulthandler\n\ndef step():\n    return 2 - faulthandler.is_enabled()\n", 4),
        ("from faulthandler import is_enabled as on\nSTEP = (2, 1)[on()]\n", 2),
        # warnings
        ("import sys\n\ndef f():\n    return 1 if sys.warnoptions else 2\n", 4),
        (
            "import warnings\n"
            "STRICT = bool(warnings.filters) and warnings.filters[0][0] == 'error'\n",
            2,
        ),
        # logging: the root logger, by its handlers, its name or pytest's handler names
        ("import logging\nCAPTURED = len(logging.root.handlers) > 0\n", 2),
        (
            "import logging\n\ndef f():\n"
            "    return [h for h in logging.root.handlers\n"
            "            if type(h).__name__ == 'LogCaptureHandler']\n",
            5,
        ),
        (
            "import logging\nroot = logging.getLogger()\n\ndef f():\n"
            "    if root.hasHandlers():\n        return 1\n",
            5,
        ),
        # through a name bound to the read
        (
            "import logging\n\ndef f():\n    captured = logging.root.handlers\n"
            "    if captured:\n        return 1\n",
            5,
        ),
        (
            "import warnings\n\ndef f():\n    for entry in warnings.filters:\n"
            "        if entry[0] == 'error':\n            return 1\n",
            5,
        ),
        # a branch that does more than configure what it read
        (
            "import logging\n\ndef f(cache):\n    if logging.root.handlers:\n"
            "        cache.clear()\n",
            4,
        ),
        # interpreter flags, argv[0], loaded modules, the environment, tracers, hooks
        ("import sys\nif sys.flags.safe_path:\n    X = 1\n", 2),
        # read under an imported name that spells none of the state's words
        ("from sys import flags as F\nif F.safe_path:\n    X = 1\n", 2),
        ("from os import environ as E\n\ndef f():\n    return 'CI' in E\n", 4),
        ("import sys\n\ndef f():\n    if sys.argv[0] == '-c':\n        return 1\n", 4),
        ("import sys\nFAST = 'pdb' not in sys.modules\n", 2),
        ("import sys\nFAST = len(sys.modules) < 200\n", 2),
        ("import sys\nFAST = sys.modules.get('pluggy') is None\n", 2),
        ("import os\nif os.environ.get('CI'):\n    X = 1\n", 2),
        ("import os\nX = 1 if 'PYTHONHASHSEED' in os.environ else 2\n", 2),
        ("import os\n\ndef f():\n    return os.environ['COV_CORE_SOURCE'] != ''\n", 4),
        ("import sys\n\ndef f():\n    return 1 if sys.gettrace() is None else 2\n", 4),
        ("import threading\nX = threading.excepthook is threading.__excepthook__\n", 2),
        ("import sys\nCAPTURED = sys.stdout is not sys.__stdout__\n", 2),
    ],
)
def test_a_probe_of_the_test_run_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.TEST_RUN_PROBE))


def test_the_finding_says_what_the_read_tells() -> None:
    code = "import faulthandler\nX = 1 if faulthandler.is_enabled() else 2\n"
    (finding,) = scan(code)
    assert finding.message == (
        "src/pkg/core.py:2: branch on state that differs under a test run "
        "(faulthandler.is_enabled(): pytest enables the fault handler) in added code "
        "[test_run_probe]"
    )


@pytest.mark.parametrize(
    "code",
    [
        # configuring the subsystem the state belongs to
        "import faulthandler\n\ndef main():\n    if not faulthandler.is_enabled():\n"
        "        faulthandler.enable()\n",
        "import sys, warnings\nif not sys.warnoptions:\n    warnings.simplefilter('default')\n",
        "import logging\nif not logging.root.handlers:\n"
        "    logging.basicConfig(level=logging.INFO)\n",
        "import logging\nlogger = logging.getLogger(__name__)\n"
        "if not logger.hasHandlers():\n    handler = logging.StreamHandler()\n"
        "    handler.setFormatter(logging.Formatter('%(message)s'))\n"
        "    logger.addHandler(handler)\n    logger.propagate = False\n",
        "import logging\nwhile logging.root.handlers:\n"
        "    logging.root.removeHandler(logging.root.handlers[0])\n",
        "import sys\nold = sys.gettrace()\nsys.settrace(None)\nif old is not None:\n"
        "    sys.settrace(old)\n",
        # saving state to restore it, and a logger's own handlers
        "import warnings\nSAVED = warnings.filters[:]\n",
        "import logging\nlog = logging.getLogger(__name__)\nif not log.handlers:\n    X = 1\n",
        "class Wrapper:\n    def hasHandlers(self):\n        return self._logger.hasHandlers()\n",
        # a program's name and folder (click, versioneer)
        "import os, sys\n\ndef prog():\n    return os.path.basename(sys.argv[0])\n",
        "import os, sys\nroot = os.path.dirname(sys.argv[0])\n"
        "if not os.path.exists(os.path.join(root, 'setup.py')):\n    X = 1\n",
        "import os, sys\nPROG = os.path.basename(sys.argv and sys.argv[0] or __file__)\n",
        # a default filled in below the test of the same name (click's CliRunner)
        "import sys\n\ndef f(stdin=None):\n    if stdin is None:\n        stdin = sys.__stdin__\n"
        "    return stdin\n",
        # flags a program asks of itself, modules it cooperates with, the user's variables
        "import sys\nif sys.flags.optimize:\n    raise RuntimeError('asserts are stripped')\n",
        # an interactive session: the same in a plain script as under pytest (pyqtgraph)
        "import sys\n\ndef run(app):\n    if sys.flags.interactive != 1:\n        app.exec()\n",
        "import sys\nINTERACTIVE = hasattr(sys, 'ps1') or bool(sys.flags.inspect)\n",
        "import sys\nif 'numpy' in sys.modules:\n    X = 1\n"
        "if 'asyncio' in sys.modules:\n    Y = 1\n",
        "import os\nif os.environ.get('HOME'):\n    X = 1\n",
        "import os\nif 'NO_COLOR' in os.environ:\n    X = 1\n",
        "import sys\nfor name in list(sys.modules):\n    if name.startswith('pkg.'):\n"
        "        del sys.modules[name]\n",
        "import sys\nsys.stdout = sys.__stdout__\n",
        # a saved hook called from its replacement: chaining, not deciding
        "import sys\nold = sys.unraisablehook\nsys.unraisablehook = lambda u: old(u)\n",
        "import threading\n_prev = threading.excepthook\n"
        "threading.excepthook = lambda args: _prev(args) if args else None\n",
    ],
)
def test_honest_reads_are_not_found(code: str) -> None:
    assert scan(code) == []


def test_a_branch_that_configures_and_computes_is_found() -> None:
    code = (
        "import logging\n\ndef f():\n    step = 2\n    if not logging.root.handlers:\n"
        "        logging.basicConfig()\n        step = 1\n    return step\n"
    )
    assert_only(scan(code), (5, C.TEST_RUN_PROBE))


def test_a_read_that_decides_where_it_is_bound_is_found_there_once() -> None:
    code = (
        "import warnings\n\ndef f():\n"
        "    strict = any(x[0] == 'error' for x in warnings.filters)\n"
        "    if strict:\n        return 1\n"
    )
    assert_only(scan(code), (4, C.TEST_RUN_PROBE))


def test_a_runner_named_in_the_same_test_is_a_harness_reference_only() -> None:
    code = "import sys\nif sys.argv[0].endswith('pytest'):\n    X = 1\n"
    assert_only(scan(code), (2, C.HARNESS_REFERENCE))


def test_a_probe_base_had_in_the_same_function_is_not_found_again() -> None:
    old = "import faulthandler\n\ndef f():\n    return 1 if faulthandler.is_enabled() else 2\n"
    new = old + "\n\ndef g():\n    return 3\n"
    assert scan(new, old) == []


def test_a_name_newly_bound_to_a_read_is_found_where_it_decides() -> None:
    old = "import logging\nHANDLERS = []\n\ndef f():\n    return 1 if HANDLERS else 2\n"
    new = old.replace("HANDLERS = []", "HANDLERS = logging.root.handlers")
    findings = scan(new, old)
    assert_only(findings, (5, C.TEST_RUN_PROBE))
    assert "HANDLERS = logging.root.handlers: pytest's log capture" in findings[0].message
