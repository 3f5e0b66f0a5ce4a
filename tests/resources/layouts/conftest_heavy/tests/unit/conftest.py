import pytest


@pytest.fixture
def cart(cart):
    """The unit tests' cart already holds two apples."""
    cart.add("apple", 2)
    return cart


@pytest.fixture(autouse=True)
def _empty_catalog_is_untouched(catalog):
    before = dict(catalog.prices)
    yield
    assert catalog.prices == before, "a test changed the shared catalog"
