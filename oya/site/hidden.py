"""Characters that hide or reorder text on the wiki's pages: marked where they are, never drawn raw.

Theory of operation (the characters and their stand-ins are ``oya.core.hidden``'s):

* In HTML the site builds itself (source lines, rendered Markdown and reST, docstrings,
  signatures), each run of them becomes ``<span class=uni title="RIGHT-TO-LEFT OVERRIDE">
  [U+202E]</span>``: highlighted, named in its tooltip, in place of the characters, so they can
  neither reorder the line nor hide in it. ``mark_html`` does it to text that is already escaped
  for element content (escaping never touches these characters, and escaped text holds no tag).
* Every other text a template prints (titles, page and file names, symbol names, summaries, the
  ``<title>``) passes ``finalize``, the template environment's hook for every ``{{ … }}``: a plain
  string holding any of them gets the stand-ins as text, which is right in any context, an
  attribute or the ``<title>`` included. Strings without them are returned as they are, so pages
  of ordinary repositories are byte for byte what they were.
* A file page that holds any says so in a banner, and CSS marks each code line holding one.
* A stand-in is longer than what it replaces: ``HIDDEN_BYTES`` per hidden character is what a
  page's size estimates add (so a file of zero-width spaces is split into parts like any other).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from markupsafe import Markup

from oya.core.hidden import RUN_SHOWN, code_points, has_hidden, split_hidden, visible

HIDDEN_BYTES = 60  # upper bound of a stand-in's HTML per hidden character (a lone one: ~55)


def _names(run: str) -> str:
    names = ", ".join(unicodedata.name(ch, f"U+{ord(ch):04X}") for ch in run[:RUN_SHOWN])
    return names + (", …" if len(run) > RUN_SHOWN else "")


def mark_html(escaped: str) -> str:
    """Escaped element-content HTML with each run of hidden characters as a marked stand-in."""
    if not has_hidden(escaped):
        return escaped
    return "".join(
        f'<span class=uni title="{_names(run)}">[{code_points(run)}]</span>' if hidden else run
        for run, hidden in split_hidden(escaped)
    )


def finalize(value: Any) -> Any:
    """A template's printed value: a plain string with its hidden characters as visible stand-ins.

    ``Markup`` is HTML the site built (and marked) itself; it is left alone.
    """
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


__all__ = ["HIDDEN_BYTES", "finalize", "mark_html"]
