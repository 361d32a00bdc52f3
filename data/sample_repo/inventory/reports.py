"""Reports printed by the command line."""

from __future__ import annotations

from inventory.service import InventoryService
from inventory.utils import format_money


def low_stock_report(service: InventoryService, threshold: int = 5) -> list[str]:
    """One line per item whose quantity is below ``threshold``, sorted by SKU."""
    lines = []
    for item in service.list_items():
        if item.quantity < threshold:
            lines.append(f"{item.sku}  {item.name}  {item.quantity} left  {format_money(item.value())}")
    return lines
