"""Repository text on a terminal: control characters shown, never obeyed; markup never parsed.

Theory of operation: everything an index holds came from a repository and is untrusted, and a
terminal obeys some characters as commands. ESC starts sequences that clear the screen, recolour
text, retitle the window or (OSC 8) turn text into a link to any host; the C1 controls
(U+0080-U+009F) do the same on terminals that read 8-bit CSI and OSC; BEL rings, CR and BS
overwrite what was printed; bidirectional overrides reorder what a reader sees ("Trojan Source").

* ``safe_text`` replaces each of them with a visible stand-in: C0 controls and DEL with their
  Unicode Control Pictures (ESC shows as ``␛``), the rest as ``<U+XXXX>``. Tab and newline stay
  (CRLF becomes LF). It is applied to every human-readable line ``oya search`` and ``oya ask``
  print, the streamed model answer and the Mermaid text included.
* Rich would also read ``[link=...]`` markup and ``:emoji:`` codes out of a plain string, so
  repository text reaches a Rich console only inside a ``rich.text.Text`` (``styled``), which
  Rich prints as it is.
* ``--json`` output is not touched: JSON escapes control characters itself (``\\u001b``), so it
  stays exact and safe.
"""

from __future__ import annotations

import re

from rich.text import Text

_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional marks, embeddings, isolates
    r"\u2028\u2029]"  # line and paragraph separators
)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # U+2400 CONTROL PICTURES: ␀ ... ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{code:04X}>"


def safe_text(text: str) -> str:
    """``text`` with every character a terminal would obey replaced by a visible stand-in."""
    return _CONTROL.sub(_visible, text.replace("\r\n", "\n"))


def styled(*parts: str | tuple[str, str]) -> Text:
    """A console line from plain strings and ``(text, rich style)`` pairs, all made safe.

    A ``Text`` is printed as it is: no markup, emoji codes or highlighting is read from it.
    """
    line = Text()
    for part in parts:
        text, style = (part, "") if isinstance(part, str) else part
        line.append(safe_text(text), style=style)
    return line
