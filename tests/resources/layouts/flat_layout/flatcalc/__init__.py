"""A reverse Polish notation calculator."""

from flatcalc.rpn import CalcError, evaluate, tokenize

__all__ = ["CalcError", "evaluate", "tokenize"]
