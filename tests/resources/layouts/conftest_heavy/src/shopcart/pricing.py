"""From subtotal to what the customer pays, in cents."""

TAX_RATE_PERCENT = 8
COUPONS = {"SAVE10": 10, "HALF": 50}


def checkout_total(cart, coupon=None):
    subtotal = cart.subtotal()
    if coupon is not None:
        if coupon not in COUPONS:
            raise ValueError(f"unknown coupon {coupon!r}")
        subtotal -= subtotal * COUPONS[coupon] // 100
    tax = (subtotal * TAX_RATE_PERCENT + 50) // 100
    return subtotal + tax
