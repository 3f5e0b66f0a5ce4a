import pytest
from shopcart import UnknownItem


def test_prefilled(cart, price):
    assert cart.count() == 2
    assert cart.subtotal() == price("0.90")


def test_add_accumulates(cart):
    cart.add("apple")
    cart.add("bread", 2)
    assert cart.lines == {"apple": 3, "bread": 2}


def test_unknown_item(cart):
    with pytest.raises(UnknownItem):
        cart.add("caviar")


def test_remove(cart):
    cart.remove("apple")
    assert cart.count() == 0


def test_quantity_must_be_positive(cart):
    with pytest.raises(ValueError):
        cart.add("bread", 0)
