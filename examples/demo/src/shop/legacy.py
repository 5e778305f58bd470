# Old helpers, replaced by shop.pricing.
def discount(price, percent):
    return price * (1 - percent / 100)
