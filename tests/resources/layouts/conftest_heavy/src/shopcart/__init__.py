"""A shopping cart with a catalog, coupons and tax."""

from shopcart.cart import Cart, UnknownItem
from shopcart.catalog import Catalog
from shopcart.pricing import checkout_total

__all__ = ["Cart", "Catalog", "UnknownItem", "checkout_total"]
