"""Prices and discounts."""

TAX_RATE = 0.2


def net_price(gross):
    return gross / (1 + TAX_RATE)


def apply_discount(price, percent):
    return price - price * percent / 100
