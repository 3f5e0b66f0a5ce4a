"""Evaluate expressions written in reverse Polish notation."""

import operator

OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}


class CalcError(ValueError):
    """An expression that cannot be evaluated."""


def tokenize(expression):
    return expression.split()


def evaluate(expression):
    stack = []
    for token in tokenize(expression):
        if token in OPERATORS:
            if len(stack) < 2:
                raise CalcError(f"{token!r} needs two operands")
            right = stack.pop()
            left = stack.pop()
            stack.append(OPERATORS[token](left, right))
        else:
            try:
                stack.append(float(token))
            except ValueError:
                raise CalcError(f"not a number: {token!r}") from None
    if len(stack) != 1:
        raise CalcError(f"{len(stack)} values left, want 1")
    return stack[0]
