"""A losing variant, kept runnable: a question cut into parts, the embedding of its prose (issue 16
item 2; docs/DECISIONS.md). On the fix commits 21 of 306 messages hold code or frames, and
embedding only the prose changed no R@1/R@5 (bench/commits_eval.py, row ``oya-prose``); the own
eval's questions are one line of prose. The browser embeds the question before the core sees it,
so shipping it would also have needed the page to ask the core first.

Theory of operation: a bug report mixes prose ("the redirect loses the method") with pasted
code, logs and stack traces. Each part suits another channel: names and paths go to BM25 and
the graph channel (``oya.core.query`` extracts them from the whole text), the prose to the
embedding. A sentence model reads only its first 256 tokens, so embedding the whole text would
embed whatever came first — often a traceback or a code block. ``split_parts`` classifies each
line, in linear time:

* fenced blocks (```` ``` ````) and indented lines (4 spaces or a tab) are code;
* stack-trace frames of Python (``File "x.py", line 3``), JavaScript/Java (``at f (x.js:3:1)``)
  and paths with a line number (``src/a.rs:12:5``, ``x.go:40``) are frames; the line after a
  Python frame (its source line) is code;
* a line with more code punctuation than letters (``foo(bar);``, ``}``, ``x = {"a": 1}``) is code;
* everything else is prose.

Length alone never decides: a long question of prose is all prose, a short traceback all frames.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^\s*(```|~~~)")
_INDENTED = re.compile(r"^( {4}|\t)")
_PY_FRAME = re.compile(r'^\s*File "[^"\n]+", line \d+')
_AT_FRAME = re.compile(r"^\s*at \S")
_PATH_LINE = re.compile(r"[\w./\\-]+\.\w+:\d+")
_PUNCT = frozenset("(){}[];=<>&|*+:\"'`,.$#@!%^~/\\-")
_LETTERS = re.compile(r"[A-Za-z]")


@dataclass(frozen=True, slots=True)
class QueryParts:
    prose: str  # the prose lines, in order
    code: str  # fenced, indented and punctuation-heavy lines
    frames: tuple[str, ...]  # stack-trace frame lines


def _code_like(line: str) -> bool:
    """More code punctuation than letters, or a statement's typical ending."""
    s = line.strip()
    if not s:
        return False
    if s.endswith((";", "{", "}", ");")) or s.startswith(("$ ", ">>> ", "#include", "import ", "from ")):
        return True
    punct = sum(1 for ch in s if ch in _PUNCT)
    letters = len(_LETTERS.findall(s))
    return punct > letters


def _is_frame(line: str) -> bool:
    return bool(_PY_FRAME.match(line) or _AT_FRAME.match(line) or _PATH_LINE.search(line) and len(line) < 200)


def split_parts(text: str) -> QueryParts:
    """``text``'s lines as prose, code and frames (see the module's rules)."""
    prose: list[str] = []
    code: list[str] = []
    frames: list[str] = []
    fenced = False
    after_py_frame = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or _INDENTED.match(line) and not _is_frame(line):
            after_py_frame = False
            code.append(line)
        elif _is_frame(line):
            after_py_frame = _PY_FRAME.match(line) is not None
            frames.append(line.strip())
        elif after_py_frame:
            after_py_frame = False
            code.append(line)
        elif _code_like(line):
            code.append(line)
        else:
            prose.append(line)
    return QueryParts("\n".join(prose).strip(), "\n".join(code).strip(), tuple(frames))


def embedding_text(text: str) -> str:
    """What the semantic channel embeds: the prose part, or the whole text when it has none."""
    prose = split_parts(text).prose
    return prose if prose else text.strip()
