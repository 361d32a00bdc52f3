"""Domain records: entities with an id, and the items the warehouse stocks."""

from __future__ import annotations

from dataclasses import dataclass


class OutOfStockError(Exception):
    """Raised when more units are removed than the warehouse holds."""


class Entity:
    """Anything stored by id."""

    def __init__(self, key: str) -> None:
        self.key = key

    def describe(self) -> str:
        """A one-line description used in logs."""
        return f"{type(self).__name__}({self.key})"


@dataclass
class Item(Entity):
    """A stocked product identified by its SKU."""

    sku: str
    name: str
    price: float
    quantity: int = 0

    def __post_init__(self) -> None:
        Entity.__init__(self, self.sku)

    def value(self) -> float:
        """Total value of the units in stock."""
        return self.price * self.quantity

    def take(self, count: int) -> None:
        """Remove ``count`` units, refusing to go below zero."""
        if count > self.quantity:
            raise OutOfStockError(f"only {self.quantity} of {self.sku} left")
        self.quantity -= count
