import pytest

from flatcalc import CalcError, evaluate


def test_missing_operand():
    with pytest.raises(CalcError, match="needs two operands"):
        evaluate("1 +")


def test_not_a_number():
    with pytest.raises(CalcError, match="not a number"):
        evaluate("1 x +")


def test_leftover_values():
    with pytest.raises(CalcError, match="2 values left"):
        evaluate("1 2")
