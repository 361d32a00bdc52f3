"""Where items live: an in-memory store and a JSON file store built on it."""

from __future__ import annotations

import json
from pathlib import Path

from inventory.models import Item


class Storage:
    """The interface the service needs from a store."""

    def get(self, sku: str) -> Item | None:
        raise NotImplementedError

    def save(self, item: Item) -> None:
        raise NotImplementedError

    def all(self) -> list[Item]:
        raise NotImplementedError


class MemoryStorage(Storage):
    """Keeps items in a dictionary keyed by SKU."""

    def __init__(self) -> None:
        self._items: dict[str, Item] = {}

    def get(self, sku: str) -> Item | None:
        return self._items.get(sku)

    def save(self, item: Item) -> None:
        self._items[item.sku] = item

    def all(self) -> list[Item]:
        return sorted(self._items.values(), key=lambda item: item.sku)


class JsonStorage(MemoryStorage):
    """A MemoryStorage that writes itself to a JSON file after every save."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        if path.exists():
            for row in json.loads(path.read_text()):
                super().save(Item(**row))

    def save(self, item: Item) -> None:
        super().save(item)
        self.flush()

    def flush(self) -> None:
        """Write every item to the file, sorted by SKU."""
        rows = [{"sku": i.sku, "name": i.name, "price": i.price, "quantity": i.quantity} for i in self.all()]
        self.path.write_text(json.dumps(rows, indent=2))
