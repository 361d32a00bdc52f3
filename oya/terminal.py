"""Repository text on a terminal: control characters shown, never obeyed; markup never parsed.

Theory of operation: everything an index holds came from a repository and is untrusted, and a
terminal obeys some characters as commands. ESC starts sequences that clear the screen, recolour
text, retitle the window or (OSC 8) turn text into a link to any host; the C1 controls
(U+0080-U+009F) do the same on terminals that read 8-bit CSI and OSC; BEL rings, CR and BS
overwrite what was printed; bidirectional controls reorder what a reader sees and invisible
characters hide what is there ("Trojan Source": ``oya.core.hidden`` lists both).

* ``safe_text`` replaces each of them with a visible stand-in: C0 controls and DEL with their
  Unicode Control Pictures (ESC shows as ``␛``), the rest as ``<U+XXXX>`` (C1, bidi controls,
  zero-width, tag and the other characters of ``oya.core.hidden``; a joiner inside an emoji or a
  Persian word stays). Tab and newline stay (CRLF becomes LF), except with ``one_line``: then
  they too show as ``␉`` and ``␊``, for a field that must stay on its line (a path whose name
  holds a newline must not print a second, forged result line). It is applied to every
  human-readable line ``oya build``, ``oya search`` and ``oya ask`` print and to every error
  line: the build's tables, paths and skipped files, titles, snippets, the streamed model answer
  and the Mermaid text.
* A line naming a path (a search result, an answer's item, citation or snippet heading) is printed
  with Rich's ``soft_wrap``: Rich would otherwise break it at a space of the name, and a name
  padded with spaces would start an output line with whatever it likes.
* Rich would also read ``[link=...]`` markup and ``:emoji:`` codes out of a plain string, so
  repository text reaches a Rich console only inside a ``rich.text.Text`` (``styled``), which
  Rich prints as it is.
* ``--json`` output is not touched: JSON escapes control characters itself (``\\u001b``), so it
  stays exact and safe (bidi and invisible characters are kept exactly there too: JSON is read by
  programs).
"""

from __future__ import annotations

import re

from rich.text import Text

from oya.core.hidden import CHAR_CLASS, joins

_OBEYED = r"\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
_CONTROL = re.compile(f"[{_OBEYED}{CHAR_CLASS}]")
_CONTROL_ONE_LINE = re.compile(f"[\t\n{_OBEYED}{CHAR_CLASS}]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # U+2400 CONTROL PICTURES: ␀ ... ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if joins(match.string, match.start()):  # ZWJ in "👩‍💻": part of what is shown, not hiding anything
        return match.group()
    return f"<U+{code:04X}>"


def safe_text(text: str, *, one_line: bool = False) -> str:
    """``text`` with every character a terminal would obey, or that hides or reorders text,
    replaced by a visible stand-in; with ``one_line`` tabs and newlines as well."""
    if one_line:
        return _CONTROL_ONE_LINE.sub(_visible, text)
    return _CONTROL.sub(_visible, text.replace("\r\n", "\n"))


def styled(*parts: str | tuple[str, str], one_line: bool = False) -> Text:
    """A console line from plain strings and ``(text, rich style)`` pairs, all made safe
    (``one_line``: no part may break the line).

    A ``Text`` is printed as it is: no markup, emoji codes or highlighting is read from it.
    """
    line = Text()
    for part in parts:
        text, style = (part, "") if isinstance(part, str) else part
        line.append(safe_text(text, one_line=one_line), style=style)
    return line
