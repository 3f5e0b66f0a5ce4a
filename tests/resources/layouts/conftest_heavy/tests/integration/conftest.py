import pytest


@pytest.fixture(params=[None, "SAVE10", "HALF"], ids=["no-coupon", "save10", "half"])
def coupon(request):
    return request.param


@pytest.fixture
def expected_total(coupon):
    """The basket in test_checkout.py: 2 cheese + 1 bread = 2599 cents before coupons."""
    return {None: 2807, "SAVE10": 2527, "HALF": 1404}[coupon]
