"""BERT WordPiece tokenization, exactly as the ``tokenizers`` library does it for all-MiniLM-L6-v2.

Theory of operation: the static embedding model (``bench.variants.static.static_embed``) is a table
of one row per WordPiece token, so the chunks and the question must be cut into the token ids the
model was distilled over. Pure standard library (it would run in the browser's Pyodide too);
``tests/bench/test_wordpiece.py`` and ``tests/bench/test_wordpiece_parity.py`` hold it to ``tokenizers``' ``BertNormalizer`` + ``BertPreTokenizer`` + ``WordPiece`` (the model's
``tokenizer.json``) over every code point and thousands of real texts. The steps, in the library's
order (huggingface/tokenizers ``normalizers/bert.rs``, ``pre_tokenizers/bert.rs``, ``models/wordpiece``):

1. Special tokens (``[CLS]``, ``[UNK]``, ...) written literally in the text are cut out first and
   become their own ids (the library's added tokens, matched on the raw text).
2. Normalise: drop NUL, U+FFFD and "other" characters (Unicode category C*, but not tab, newline and
   carriage return); every White_Space character becomes a space; CJK ideographs get a space on each
   side; NFD, then non-spacing marks (Mn) dropped; lower case one character at a time (no
   final-sigma rule, as Rust's ``char::to_lowercase``).
3. Pre-tokenize: split on White_Space, then isolate every punctuation character (ASCII punctuation
   and Unicode P*).
4. WordPiece: greedy longest match from the left, continuations prefixed ``##``; a word with a piece
   that matches nothing, or longer than 100 characters, is one ``[UNK]``.

ASCII text (nearly all code) takes a fast path through one regular expression with the same result,
and each distinct word's pieces are memoised: a build tokenizes every chunk of a repository.
Categories and NFD come from ``unicodedata``; for characters assigned after the Unicode version of
the interpreter (14.0 in CPython 3.11, newer in Pyodide) the two may disagree, which only moves a
question holding such characters a little.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

# Unicode's White_Space property (Rust's ``char::is_whitespace``), not ``str.isspace``, which also
# counts U+001C..U+001F (control characters, dropped by the normaliser) as spaces.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
# "other" characters the normaliser drops; unassigned code points (Cn) are kept, as the library does
_OTHER = frozenset(("Cc", "Cf", "Co", "Cs"))
# Where Unicode 14 (CPython 3.11's ``unicodedata``) and the library's older tables disagree, the
# library's view: code points it does not know (kept as they are, like any unassigned one), and
# three whose category changed since. Found by comparing every code point (tests/bench/test_wordpiece_parity.py).
_LIBRARY_UNKNOWN_RANGES = (
    "61D 7FD 890-891 898-89F 8CA-8E2 9FD-9FE A76 AFA-AFF B55 C04 C3C C77 C84 D00 D3B-D3C D81 EBA "
    "180F 1885-1886 1ABF-1ACE 1B7D-1B7E 1DF6-1DFB 2E43-2E4F 2E52-2E5D A82C A8C5 A8FF A9BD "
    "10D24-10D27 10EAB-10EAD 10F46-10F50 10F55-10F59 10F82-10F89 11070 11073-11074 110C2 110CD "
    "111CF 1123E 1133B 11438-1143F 11442-11444 11446 1144B-1144F 1145A-1145B 1145D-1145E "
    "11660-1166C 116B9 1182F-11837 11839-1183B 1193B-1193C 1193E 11943-11946 119D4-119D7 "
    "119DA-119DB 119E0 119E2 11A01-11A0A 11A33-11A38 11A3B-11A47 11A51-11A56 11A59-11A5B "
    "11A8A-11A96 11A98-11A9C 11A9E-11AA2 11C30-11C36 11C38-11C3D 11C3F 11C41-11C45 11C70-11C71 "
    "11C92-11CA7 11CAA-11CB0 11CB2-11CB3 11CB5-11CB6 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 "
    "11D47 11D90-11D91 11D95 11D97 11EF3-11EF4 11EF7-11EF8 11FFF 12FF1-12FF2 13430-13438 "
    "16E97-16E9A 16F4F 16FE2 16FE4 1CF00-1CF2D 1CF30-1CF46 1E000-1E006 1E008-1E018 1E01B-1E021 "
    "1E023-1E024 1E026-1E02A 1E130-1E136 1E2AE 1E2EC-1E2EF 1E944-1E94A 1E95E-1E95F "
)
_LIBRARY_CATEGORY = {0x166D: "Po", 0x1734: "Mn", 0x111C9: "Po"}
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
MAX_WORD_CHARS = 100
CONTINUATION = "##"
UNK = "[UNK]"

# ASCII fast path: control characters (other than tab, LF, CR) vanish, letters and digits run
# together, each punctuation character stands alone, everything else (spaces) separates.
_ASCII_DROP = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_WORDS = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")


def _parse_ranges(text: str) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split():
        lo, _, hi = part.partition("-")
        out.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return frozenset(out)


_LIBRARY_UNKNOWN = _parse_ranges("".join(_LIBRARY_UNKNOWN_RANGES))


def category(c: str) -> str:
    """The character's general category as the library's tables have it."""
    cp = ord(c)
    if cp in _LIBRARY_CATEGORY:
        return _LIBRARY_CATEGORY[cp]
    return "Cn" if cp in _LIBRARY_UNKNOWN else unicodedata.category(c)


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK)


def _normalize_char(c: str) -> str:
    """One raw character through clean-text, CJK spacing, accent stripping and lower case."""
    cp = ord(c)
    # the library filters first (NUL, U+FFFD, controls), then maps the White_Space left to spaces
    cat = category(c)
    if cp == 0 or cp == 0xFFFD or (c not in "\t\n\r" and cat in _OTHER):
        return ""
    if c in WHITE_SPACE:
        return " "
    if cat == "Cn":  # nothing to decompose or lower in a character the library does not know
        out = c
    else:
        out = "".join(d.lower() for d in unicodedata.normalize("NFD", c) if category(d) != "Mn")
    # spaced by code point before the decomposition, as the library does (a compatibility
    # ideograph decomposes into another; an unassigned one in the ranges is spaced too)
    return f" {out} " if _is_cjk(cp) else out


def _is_punct(c: str) -> bool:
    return c in _ASCII_PUNCT or category(c)[0] == "P"


def pre_tokenize(text: str) -> list[str]:
    """The words of ``text`` after normalisation (steps 2 and 3), without special tokens."""
    if text.isascii():
        return _ASCII_WORDS.findall(_ASCII_DROP.sub("", text).lower())
    norm = "".join(map(_normalize_char, text))
    # The normaliser's output can hold characters it did not check (a decomposition, a lower case
    # form): the pre-tokenizer judges the normalised text, as the library's does.
    words: list[str] = []
    cur: list[str] = []
    for c in norm:
        if c in WHITE_SPACE:
            if cur:
                words.append("".join(cur))
                cur = []
        elif _is_punct(c):
            if cur:
                words.append("".join(cur))
                cur = []
            words.append(c)
        else:
            cur.append(c)
    if cur:
        words.append("".join(cur))
    return words


class WordPiece:
    """A WordPiece vocabulary (token -> id, as in ``vocab.txt``) and the tokenizer over it."""

    def __init__(
        self, vocab: Sequence[str], special: Iterable[str] = ("[PAD]", UNK, "[CLS]", "[SEP]", "[MASK]")
    ) -> None:
        self.vocab: dict[str, int] = {tok: i for i, tok in enumerate(vocab)}
        if len(self.vocab) != len(vocab):
            raise ValueError("a WordPiece vocabulary lists each token once")
        if UNK not in self.vocab:
            raise ValueError(f"a WordPiece vocabulary has {UNK}")
        self.unk_id = self.vocab[UNK]
        self.special = {s: self.vocab[s] for s in special if s in self.vocab}
        self._split = re.compile(
            "(" + "|".join(map(re.escape, sorted(self.special, key=len, reverse=True))) + ")"
        )
        self._memo: dict[str, tuple[int, ...]] = {}
        self._longest = max(map(len, vocab))

    def word_ids(self, word: str) -> tuple[int, ...]:
        """The pieces of one pre-tokenized word (step 4), memoised."""
        hit = self._memo.get(word)
        if hit is not None:
            return hit
        ids = self._pieces(word)
        if len(self._memo) < 1_000_000:  # a bound, not a cache policy: real vocabularies stay far below
            self._memo[word] = ids
        return ids

    def _pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unk_id,)
        vocab = self.vocab
        out: list[int] = []
        start = 0
        n = len(word)
        while start < n:
            end = min(n, start + self._longest)
            found = -1
            while start < end:
                piece = word[start:end] if start == 0 else CONTINUATION + word[start:end]
                found = vocab.get(piece, -1)
                if found >= 0:
                    break
                end -= 1
            if found < 0:
                return (self.unk_id,)
            out.append(found)
            start = end
        return tuple(out)

    def encode(self, text: str, max_tokens: int | None = None) -> list[int]:
        """Token ids of ``text`` without ``[CLS]``/``[SEP]``, at most ``max_tokens`` of them."""
        ids: list[int] = []
        parts = self._split.split(text) if self.special and "[" in text else [text]
        for i, part in enumerate(parts):
            if i % 2:  # a special token written in the text
                ids.append(self.special[part])
                continue
            for word in pre_tokenize(part):
                ids.extend(self.word_ids(word))
            if max_tokens is not None and len(ids) >= max_tokens:
                break
        return ids if max_tokens is None else ids[:max_tokens]
