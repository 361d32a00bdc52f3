"""Business rules: adding, restocking and removing stock."""

from __future__ import annotations

from inventory.models import Item, OutOfStockError
from inventory.storage import MemoryStorage, Storage
from inventory.utils import format_money


class InventoryService:
    """Applies the stock rules on top of a Storage."""

    def __init__(self, store: Storage | None = None) -> None:
        self.store = store if store is not None else MemoryStorage()

    def add_item(self, item: Item) -> Item:
        """Register a new item; an existing SKU is restocked instead."""
        existing = self.store.get(item.sku)
        if existing is not None:
            return self.restock(item.sku, item.quantity)
        self.store.save(item)
        return item

    def restock(self, sku: str, count: int) -> Item:
        """Add ``count`` units to an existing item."""
        item = self._require(sku)
        item.quantity += count
        self.store.save(item)
        return item

    def remove_stock(self, sku: str, count: int) -> Item:
        """Take ``count`` units out; raises OutOfStockError if there are too few."""
        item = self._require(sku)
        item.take(count)
        self.store.save(item)
        return item

    def list_items(self) -> list[Item]:
        return self.store.all()

    def total_value(self) -> str:
        """The value of everything in stock, formatted for display."""
        return format_money(sum(item.value() for item in self.list_items()))

    def _require(self, sku: str) -> Item:
        item = self.store.get(sku)
        if item is None:
            raise OutOfStockError(f"unknown SKU {sku}")
        return item
