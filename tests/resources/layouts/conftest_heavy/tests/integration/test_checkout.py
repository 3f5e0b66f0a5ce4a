import pytest
from shopcart import checkout_total

pytestmark = pytest.mark.integration


def test_total_with_each_coupon(make_cart, coupon, expected_total):
    basket = make_cart(cheese=2, bread=1)
    assert checkout_total(basket, coupon) == expected_total


def test_unknown_coupon(make_cart):
    with pytest.raises(ValueError, match="unknown coupon"):
        checkout_total(make_cart(apple=1), "FREE")


def test_tax_rounds_half_up(make_cart, price):
    # 45 cents of apples: 3.6 cents of tax rounds to 4
    assert checkout_total(make_cart(apple=1)) == price("0.49")
