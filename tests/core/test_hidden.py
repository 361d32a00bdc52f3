"""The rule for characters that hide or reorder text (``oya.core.hidden``): which are shown, which stay.

Every bidirectional control of the Unicode database is shown; a joiner stays only between two
visible non-ASCII characters; runs become one bounded stand-in; splitting loses nothing; and the
text of this very repository (code, docs, results) holds nothing the rule would change.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from oya.core.hidden import (
    HIDDEN_RANGES,
    JOINERS,
    count_hidden,
    has_hidden,
    hidden_positions,
    split_hidden,
    visible,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
# the bidirectional classes of the explicit formatting characters (UAX #9): embeddings,
# overrides, isolates and their pops; plus the implicit marks LRM, RLM and ALM
BIDI_CONTROL_CLASSES = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"}
IMPLICIT_MARKS = "\u200e\u200f\u061c"


def test_every_bidirectional_control_is_shown() -> None:
    # all of them are in the Basic Multilingual Plane (U+202A-U+202E, U+2066-U+2069)
    controls = [chr(c) for c in range(0x10000) if unicodedata.bidirectional(chr(c)) in BIDI_CONTROL_CLASSES]
    assert len(controls) == 9
    for ch in [*controls, *IMPLICIT_MARKS]:
        assert visible(f"a{ch}b") == f"a[U+{ord(ch):04X}]b"


def test_invisible_characters_are_shown() -> None:
    assert visible("is\u200badmin") == "is[U+200B]admin"
    assert visible("\u3164 = 1") == "[U+3164] = 1"  # a Hangul filler: a valid, invisible identifier
    assert visible("x\u2060\ufeff\u00ad") == "x[U+2060 U+FEFF U+00AD]"
    assert visible("emoji\U000e0100") == "emoji[U+E0100]"
    # a run of hidden characters is one stand-in of at most four code points and a count
    tags = "".join(chr(0xE0000 + ord(c)) for c in "ignore all")
    assert visible(f"ok{tags}") == "ok[U+E0069 U+E0067 U+E006E U+E006F +6]"
    assert count_hidden(f"ok{tags}") == 10


def test_joiners_stay_only_inside_non_ascii_words_and_emoji() -> None:
    for ordinary in ("👩\u200d💻", "❤\ufe0f\u200d🔥", "می\u200cخواهم", "क्\u200dष"):
        assert visible(ordinary) == ordinary and not has_hidden(ordinary)
    assert visible("a\u200db") == "a[U+200D]b"  # beside ASCII
    assert visible("\u200dé") == "[U+200D]é"  # at an edge
    assert visible("é\u200d\u200dé") == "é[U+200D U+200D]é"  # beside another hidden character
    assert visible("é\u202e\u200dé") == "é[U+202E U+200D]é"


_TEXT = st.text(
    alphabet=st.sampled_from(
        ["a", " ", "é", "👩", "\u200d", "\u200c", "\u200b", "\u202e", "\ufe0f", "\U000e0041"]
    )
)


@given(_TEXT)
def test_split_hidden_covers_the_text_in_alternating_runs(text: str) -> None:
    runs = split_hidden(text)
    assert "".join(run for run, _ in runs) == text
    assert all(run for run, _ in runs)
    assert all(a[1] != b[1] for a, b in zip(runs, runs[1:], strict=False))  # neighbours differ
    assert (
        sum(len(run) for run, hidden in runs if hidden)
        == count_hidden(text)
        == len(list(hidden_positions(text)))
    )
    assert has_hidden(text) == any(hidden for _, hidden in runs)
    assert not has_hidden(visible(text))  # stand-ins are plain ASCII


def test_the_lists_are_sorted_and_apart() -> None:
    assert all(lo <= hi for lo, hi in HIDDEN_RANGES)
    assert all(a[1] < b[0] for a, b in zip(HIDDEN_RANGES, HIDDEN_RANGES[1:], strict=False))
    assert not any(lo <= j <= hi for j in JOINERS for lo, hi in HIDDEN_RANGES)
    # spaces of other widths look like what they are: left alone
    assert visible("a\u00a0b\u3000c\u2003d\u202fe") == "a\u00a0b\u3000c\u2003d\u202fe"


def test_this_repositorys_text_is_unchanged() -> None:
    """Ordinary text keeps every byte: nothing in Oya's own code, docs and results is a stand-in."""
    suffixes = {".py", ".md", ".js", ".css", ".html", ".json", ".toml", ".txt", ".rst", ".yaml"}
    roots = ("oya", "pipelines", "site_template", "docs", "data", "tests", "bench")
    files = [REPO_ROOT / "README.md"]
    files += [
        p
        for root in roots
        for p in (REPO_ROOT / root).rglob("*")
        # not the ignored caches a bench leaves (bench/.cache holds fetched repositories)
        if p.suffix in suffixes
        and p.is_file()
        and not any(x.startswith(".") for x in p.relative_to(REPO_ROOT).parts)
    ]
    assert len(files) > 100
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert visible(text) == text, path
