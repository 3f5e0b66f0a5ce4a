"""Prices in cents, by SKU."""


class Catalog:
    def __init__(self, prices):
        self.prices = dict(prices)

    @classmethod
    def from_dict(cls, data):
        return cls({item["sku"]: item["cents"] for item in data["items"]})

    def price(self, sku):
        return self.prices[sku]
