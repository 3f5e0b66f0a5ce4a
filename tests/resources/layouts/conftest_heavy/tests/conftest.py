import json
import pathlib

import pytest
from helpers import cents
from shopcart import Cart, Catalog

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def catalog():
    return Catalog.from_dict(json.loads((DATA / "catalog.json").read_text()))


@pytest.fixture
def cart(catalog):
    return Cart(catalog)


@pytest.fixture
def make_cart(catalog):
    def make(**quantities):
        made = Cart(catalog)
        for sku, quantity in quantities.items():
            made.add(sku, quantity)
        return made

    return make


@pytest.fixture
def price():
    return cents
