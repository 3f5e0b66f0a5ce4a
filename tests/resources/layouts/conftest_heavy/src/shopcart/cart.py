"""What the customer is buying."""


class UnknownItem(KeyError):
    """A SKU the catalog does not sell."""


class Cart:
    def __init__(self, catalog):
        self.catalog = catalog
        self.lines = {}

    def add(self, sku, quantity=1):
        if sku not in self.catalog.prices:
            raise UnknownItem(sku)
        if quantity < 1:
            raise ValueError("quantity must be at least 1")
        self.lines[sku] = self.lines.get(sku, 0) + quantity

    def remove(self, sku):
        self.lines.pop(sku, None)

    def subtotal(self):
        return sum(self.catalog.price(sku) * qty for sku, qty in self.lines.items())

    def count(self):
        return sum(self.lines.values())
