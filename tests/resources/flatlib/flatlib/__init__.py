"""A small toolz: iterator and dictionary helpers."""

from flatlib.dicttoolz import merge, valmap
from flatlib.itertoolz import frequencies, partition_all, take, unique

__all__ = ["frequencies", "merge", "partition_all", "take", "unique", "valmap"]
