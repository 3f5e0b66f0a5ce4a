"""Identifiers between snake_case, camelCase and kebab-case."""

import re

__version__ = "2.0.1"

BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-\s]+")


def words(name):
    return [w.lower() for w in BOUNDARY.split(name) if w]


def snake_case(name):
    return "_".join(words(name))


def kebab_case(name):
    return "-".join(words(name))


def camel_case(name):
    first, *rest = words(name) or [""]
    return first + "".join(w.capitalize() for w in rest)
