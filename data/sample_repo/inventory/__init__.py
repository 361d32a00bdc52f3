"""Inventory: a tiny stock-keeping application."""

from inventory.models import Item
from inventory.service import InventoryService

__all__ = ["Item", "InventoryService"]
