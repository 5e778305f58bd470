from shop.pricing import apply_discount


class Cart:
    def __init__(self):
        self.items = []

    def add(self, name, price):
        self.items.append((name, price))

    def total(self, discount=0):
        subtotal = sum(price for _, price in self.items)
        return apply_discount(subtotal, discount)
