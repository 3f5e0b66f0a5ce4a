"""andgate: a merge gate that ANDs the verdicts of test trust classes.

PYTEST_DONT_REWRITE: this package is imported into the user's pytest process by
the plugin, so it must import only the standard library at package level.
"""

__version__ = "0.3.0"
