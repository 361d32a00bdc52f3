"""A pasted bug report over the question limit, condensed to what locates the bug (issue 24).

Users paste long reports: a title, a story, a log, a traceback, a snippet. Past
``MAX_QUESTION_CHARS`` the question used to be cut to its first part, and cutting the tail lost
what usually comes last: the error and its stack frames. So the report is condensed instead, in
linear time:

1. Every line gets a rank: the title and the report's opening paragraph first; then lines
   that state an error (``Error``, ``Exception``, ``panic``, ``Traceback``, ``Caused by``,
   ``FAILED``, ``fatal``...); then stack frames (Python, Java, JavaScript, Go, Rust, C/C++,
   Ruby, PHP); then lines that name code (an identifier with ``_``, a capital inside, ``::``,
   ``.`` or ``()``); then the rest (prose, log noise).
2. A line seen before is dropped (logs repeat themselves).
3. Lines are taken rank by rank, in their order, until the limit; the kept ones are joined in
   the report's own order. Frames beyond ``FRAMES_KEPT`` are taken from both ends of their
   run, where the failing call and the entry point are.
4. ``Condensed`` says what was kept and dropped, for the one line the CLI and the Ask panel show.

Callers: the CLI (``oya.cli._read_query``) and ``Bundle.ask`` condense a question over the limit
before retrieving; the Ask panel's worker condenses it first (op ``condense``) so the page embeds
the condensed text, as the CLI does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPENING_CHARS = 1500  # the title and the opening paragraph, up to this much, come first
FRAMES_KEPT = 60  # of a long run of stack frames, this many from its two ends
_FRAME_GAP = 3
MAX_LINE_CHARS = 2000  # a longer line (a minified blob, a data dump) is cut to this

_ERROR = re.compile(
    r"(Error|Exception|Panic|Fault|Failure)\b|\bpanic(ked)?\b|Traceback|Caused by|\bFAIL(ED)?\b|"
    r"\bfatal\b|\berror(\[|:)|\bSIGSEGV\b|[Ss]egmentation fault|\bassert(ion)?\b|\bthrows?\b|\bundefined\b",
)
_FRAME = re.compile(
    r'^\s*File "[^"\n]{1,300}", line \d+|'  # Python
    r"^\s*at [\w$.<>/]+\([^()\n]{0,200}\)|"  # Java, Kotlin, C#
    r"^\s*at [^\n]{1,300}:\d+(:\d+)?\)?\s*$|"  # JavaScript, Rust backtraces
    r"^\s*#\d+\s+[^\n]{1,300}(\bat\b|\bin\b|\()[^\n]{0,300}:\d+|"  # gdb, PHP
    r"^\s*[\w./\\-]{1,300}\.(go|rs|c|cc|cpp|h|hpp|rb|php|py|js|ts|java|kt|swift|cs):\d+|"  # file:line
    r"^\s*from [^\n]{1,300}\.rb:\d+",  # Ruby
)
_CODE = re.compile(r"\w_\w|[a-z][A-Z]|::|\w\.\w|\w\(\)")

# ranks, best first
_OPENING, _ERROR_LINE, _FRAME_LINE, _CODE_LINE, _OTHER = range(5)


@dataclass(frozen=True)
class Condensed:
    """A report condensed to ``limit`` characters, and what went."""

    text: str
    original_chars: int
    kept_lines: int
    dropped_lines: int
    repeated_lines: int

    def note(self, *, more: bool = False) -> str:
        """One line for the reader: how long the report was, what was kept, what went (``more``:
        the report was longer still, its reader stopped at ``original_chars``)."""
        size = f"more than {self.original_chars:,}" if more else f"{self.original_chars:,}"
        return (
            f"the question is {size} characters long; {len(self.text):,} were read: "
            f"the title, errors, stack frames and lines naming code first ({self.kept_lines:,} lines kept, "
            f"{self.dropped_lines:,} dropped, {self.repeated_lines:,} of them repeats)"
        )


def _rank(line: str, in_opening: bool) -> int:
    if in_opening:
        return _OPENING
    if _FRAME.search(line):
        return _FRAME_LINE
    if _ERROR.search(line):
        return _ERROR_LINE
    if _CODE.search(line):
        return _CODE_LINE
    return _OTHER


def _trim_frame_runs(ranks: list[int]) -> None:
    """Demote the middle of every run of more than ``FRAMES_KEPT`` frames to ``_OTHER`` (a run:
    frames at most ``_FRAME_GAP`` lines apart, so a Python frame's source line does not break
    it): a deep recursion's thousand frames say less than its first and last ones."""
    run: list[int] = []
    for i in [*(k for k, r in enumerate(ranks) if r == _FRAME_LINE), -1]:
        if run and (i < 0 or i - run[-1] > _FRAME_GAP):
            half = FRAMES_KEPT // 2
            for k in run[half:-half] if len(run) > FRAMES_KEPT else ():
                ranks[k] = _OTHER
            run = []
        if i >= 0:
            run.append(i)


def condense_report(text: str, limit: int) -> Condensed | None:
    """``text`` condensed to at most ``limit`` characters, or None when it already fits."""
    if len(text) <= limit:
        return None
    lines = [line[:MAX_LINE_CHARS] for line in text.split("\n")]
    seen: set[str] = set()
    keep_line = [False] * len(lines)
    ranks = [_OTHER] * len(lines)
    repeated = 0
    opening = 0
    in_opening = True
    for i, line in enumerate(lines):
        key = line.strip()
        if in_opening and (opening > OPENING_CHARS or (i > 0 and not key and opening > 0)):
            in_opening = False
        opening += len(line) + 1
        if not key:
            continue
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        keep_line[i] = True
        ranks[i] = _rank(line, in_opening)
    _trim_frame_runs(ranks)
    buckets: list[list[int]] = [[] for _ in range(_OTHER + 1)]  # one pass: each line into its rank
    for i, keep in enumerate(keep_line):
        if keep:
            buckets[ranks[i]].append(i)
    chosen = [False] * len(lines)
    used = 0
    for bucket in buckets:
        for i in bucket:
            if used + len(lines[i]) + 1 <= limit:
                chosen[i] = True
                used += len(lines[i]) + 1
    kept = [line for i, line in enumerate(lines) if chosen[i]]
    nonblank = sum(1 for line in lines if line.strip())
    return Condensed(
        text="\n".join(kept)[:limit],
        original_chars=len(text),
        kept_lines=len(kept),
        dropped_lines=nonblank - len(kept),
        repeated_lines=repeated,
    )
