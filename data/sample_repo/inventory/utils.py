"""Small helpers shared by the service, the reports and the command line."""

from __future__ import annotations

import re


def format_money(amount: float, currency: str = "EUR") -> str:
    """Format an amount with two decimals and its currency code."""
    return f"{amount:,.2f} {currency}"


def slugify(text: str) -> str:
    """Lower-case ``text`` and join its words with dashes."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)


def parse_quantity(raw: str) -> int:
    """Parse a non-negative whole quantity typed by a user."""
    value = int(raw.strip())
    if value < 0:
        raise ValueError(f"quantity must not be negative: {raw}")
    return value
