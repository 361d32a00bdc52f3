"""Command line: ``python -m inventory.cli add|remove|report``."""

from __future__ import annotations

import argparse
from pathlib import Path

from inventory.models import Item
from inventory.reports import low_stock_report
from inventory.service import InventoryService
from inventory.storage import JsonStorage
from inventory.utils import parse_quantity


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for the three sub-commands."""
    parser = argparse.ArgumentParser(prog="inventory")
    parser.add_argument("--db", type=Path, default=Path("inventory.json"))
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("--sku", required=True)
    add.add_argument("--name", required=True)
    add.add_argument("--price", type=float, required=True)
    add.add_argument("--quantity", default="0")
    remove = sub.add_parser("remove")
    remove.add_argument("--sku", required=True)
    remove.add_argument("--quantity", default="1")
    report = sub.add_parser("report")
    report.add_argument("--threshold", type=int, default=5)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command against the JSON store and print its result."""
    args = build_parser().parse_args(argv)
    service = InventoryService(JsonStorage(args.db))
    if args.command == "add":
        item = Item(args.sku, args.name, args.price, parse_quantity(args.quantity))
        print(service.add_item(item).describe())
    elif args.command == "remove":
        print(service.remove_stock(args.sku, parse_quantity(args.quantity)).describe())
    else:
        for line in low_stock_report(service, args.threshold):
            print(line)
        print("total", service.total_value())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
