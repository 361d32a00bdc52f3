"""Characters that hide or reorder text, and their visible stand-ins (Trojan Source, CVE-2021-42574).

Theory of operation: repository text is untrusted, and some characters change what a reader sees
without being seen themselves. Bidirectional controls reorder a line (a comment that ends
mid-line, a string that swallows the code after it); invisible characters put a second name or a
hidden instruction where the eye sees one (a zero-width space inside ``isAdmin``, a Hangul filler
used as a variable name, tag characters spelling ASCII that only a machine reads). Code hosts warn
about both (GitHub's "hidden or bidirectional Unicode text", Gitea and VS Code's invisible set);
Oya shows each one as a stand-in wherever it shows repository text: the terminal
(``oya.terminal``), the wiki's pages (``oya.site.hidden``) and the Ask panel
(``site_template/static/ask/util.js``, whose copy of the two lists below a test holds equal).

* ``HIDDEN_RANGES`` are always shown: every bidirectional formatting character; the
  default-ignorable and blank characters of VS Code's invisible set that no ordinary text needs
  raw (zero-width space, word joiner, invisible operators, soft hyphen, combining grapheme
  joiner, Hangul and Khmer fillers, Mongolian selectors, BOM inside text, interlinear
  annotations, shorthand and musical format controls, tags); variation selectors but VS15/VS16 (text or
  emoji presentation: "⚠️" is ordinary; a run of the other 254 is how data is smuggled in an
  emoji); and the line and paragraph separators (a line break JavaScript obeys and a viewer may
  not draw).
* ``JOINERS`` (ZWNJ, ZWJ) are ordinary between two visible non-ASCII characters (emoji sequences
  "👩‍💻", Persian and Indic words), so there they stay; anywhere else (beside ASCII, at an edge,
  beside another hidden character) they are shown.
* Left alone on purpose: spaces of other widths (no-break, ideographic, ...: they show as space),
  and control characters, which only a terminal obeys (``oya.terminal`` shows those too).
* A run of hidden characters becomes one stand-in ``[U+202E]``, ``[U+200B U+200B]``, listing at
  most ``RUN_SHOWN`` code points and then how many more (``[U+E0068 U+E0069 U+E0020 U+E0074 +12]``),
  so hostile text cannot make a page grow more than a few dozen bytes per hidden run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

HIDDEN_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark (bidi)
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian free variation selectors and vowel separator
    (0x200B, 0x200B),  # zero width space
    (0x200E, 0x200F),  # left-to-right and right-to-left marks (bidi)
    (0x2028, 0x2029),  # line and paragraph separators
    (0x202A, 0x202E),  # bidi embeddings, overrides and pop
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated format characters
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0D),  # variation selectors 1-14 (not 15 and 16: text and emoji presentation)
    (0xFEFF, 0xFEFF),  # zero width no-break space (a BOM inside the text)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF9, 0xFFFB),  # interlinear annotation anchor, separator, terminator
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format characters
    (0xE0000, 0xE007F),  # tags
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
JOINERS: tuple[int, ...] = (0x200C, 0x200D)  # zero width non-joiner and joiner
RUN_SHOWN = 4  # code points a stand-in lists before "+N"


def _char_class(ranges: tuple[tuple[int, int], ...], singles: tuple[int, ...]) -> str:
    parts = [chr(lo) if lo == hi else f"{chr(lo)}-{chr(hi)}" for lo, hi in ranges]
    return "".join(parts) + "".join(chr(c) for c in singles)


# the body of a regex character class for every character that may be shown (joiners included)
CHAR_CLASS = _char_class(HIDDEN_RANGES, JOINERS)
_CANDIDATE = re.compile(f"[{CHAR_CLASS}]")
_JOINERS = frozenset(map(chr, JOINERS))


def _ordinary_neighbour(ch: str) -> bool:
    return ch >= "\x80" and _CANDIDATE.match(ch) is None


def joins(text: str, i: int) -> bool:
    """Whether the joiner at ``text[i]`` joins two visible non-ASCII characters (and so stays)."""
    return (
        text[i] in _JOINERS
        and 0 < i < len(text) - 1
        and _ordinary_neighbour(text[i - 1])
        and _ordinary_neighbour(text[i + 1])
    )


def hidden_positions(text: str) -> Iterator[int]:
    """The index of each character of ``text`` that is shown as a stand-in, in order."""
    return (m.start() for m in _CANDIDATE.finditer(text) if not joins(text, m.start()))


def has_hidden(text: str) -> bool:
    """Whether ``text`` holds a character to show (cheap when it holds none)."""
    return next(hidden_positions(text), None) is not None


def split_hidden(text: str) -> list[tuple[str, bool]]:
    """``text`` as consecutive runs ``(run, hidden)``, joined they give ``text`` back."""
    spans: list[tuple[int, int]] = []  # [start, end) of each hidden run
    for i in hidden_positions(text):
        if spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    pieces: list[tuple[str, bool]] = []
    pos = 0
    for start, end in spans:
        if start > pos:
            pieces.append((text[pos:start], False))
        pieces.append((text[start:end], True))
        pos = end
    if pos < len(text):
        pieces.append((text[pos:], False))
    return pieces


def code_points(run: str) -> str:
    """``U+202E``, or for a run ``U+200B U+200B``, at most ``RUN_SHOWN`` then ``+N``."""
    shown = " ".join(f"U+{ord(c):04X}" for c in run[:RUN_SHOWN])
    return shown + (f" +{len(run) - RUN_SHOWN}" if len(run) > RUN_SHOWN else "")


def visible(text: str) -> str:
    """``text`` with each run of hidden characters replaced by its stand-in ``[U+XXXX ...]``."""
    if not has_hidden(text):
        return text
    return "".join(f"[{code_points(run)}]" if hidden else run for run, hidden in split_hidden(text))


def count_hidden(text: str) -> int:
    """How many characters of ``text`` are shown as stand-ins."""
    return sum(1 for _ in hidden_positions(text))
