"""Cut files into retrievable chunks.

Theory of operation:

* A chunk is a contiguous run of whole lines: ``Chunk.text`` is exactly the lines
  ``start_line..end_line`` joined by ``\\n`` (a line ends only at ``\\n``, as tree-sitter
  counts rows), so a citation's line span always shows the chunk's text.
* Parsed code (every language ``oya.graph.parsing`` reads) is cut along its symbols. Each function
  and method is one chunk. Each container (the module, a class) keeps the lines its
  members do not cover: a class's first such block, from its ``class`` line to the line
  before its first member, is the class chunk (header, docstring, class attributes);
  comment lines directly above a symbol (no blank line between) go with the symbol;
  module-level leftovers (imports, constants, ``if __name__ == ...``) are packed by
  paragraphs into chunks of about ``MODULE_BUDGET`` tokens. Blank-only blocks are
  dropped and blank lines are trimmed from chunk edges, so every non-blank line belongs
  to exactly one chunk and chunks never overlap.
* Markdown is cut into sections at ATX headings (not inside fenced code), reStructuredText
  at underlined or overlined titles; a section's title is its heading path
  ("Install > From source").
* Everything else is cut into windows of about ``WINDOW_LINES`` lines, ending at a blank
  line when one is near.
* Any chunk over ``MAX_TOKENS`` (``count_tokens``) is cut again into pieces of about
  ``SPLIT_BUDGET`` tokens, at blank lines where possible and between lines otherwise; a
  single longer line stays whole.
* Ids are content-derived: the first 16 hex digits of
  sha256(path NUL start NUL end NUL text), so unchanged content keeps its id.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import PurePosixPath

from oya.core.records import Chunk, Node, chunk_id, content_hash
from oya.core.text import split_lines as core_split_lines
from oya.core.tokenize import count_tokens
from oya.models import ParsedFile, SourceFile

MODULE_BUDGET = 400
MAX_TOKENS = 800
SPLIT_BUDGET = 400
WINDOW_LINES = 60
DOC_LANGUAGES = frozenset({"markdown", "md", "rst", "restructuredtext", "text", "plaintext", "txt"})
_MARKDOWN = (frozenset({"markdown", "md"}), (".md", ".markdown", ".mdx"))
_RST = (frozenset({"rst", "restructuredtext"}), (".rst", ".rest"))

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+$")
_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1+[ \t]*$")

Span = tuple[int, int, str, str | None]  # start, end (1-based, inclusive), title, node id


def split_lines(text: str) -> list[str]:
    """Lines of ``text``; only ``\\n`` ends a line and a final newline adds no empty line."""
    if not text:
        return []
    lines = core_split_lines(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def _is_kind(file: SourceFile, kind: tuple[frozenset[str], tuple[str, ...]]) -> bool:
    languages, suffixes = kind
    return file.language.lower() in languages or file.path.lower().endswith(suffixes)


def chunk_file(file: SourceFile, parsed: ParsedFile | None) -> list[Chunk]:
    """Chunks of one file, sorted by position; empty for a file without text."""
    lines = split_lines(file.text)
    if not lines:
        return []
    if _is_kind(file, _MARKDOWN):
        kind, spans = "doc", _markdown_sections(lines, PurePosixPath(file.path).name)
    elif _is_kind(file, _RST):
        kind, spans = "doc", _rst_sections(lines, PurePosixPath(file.path).name)
    elif parsed is not None and parsed.symbols:
        comments = _COMMENTS.get(file.language.lower(), _DEFAULT_COMMENTS)
        kind, spans = "code", _symbol_spans(lines, parsed, comments)
    else:
        kind = "doc" if file.language.lower() in DOC_LANGUAGES else "code"
        spans = list(_windows(lines, 1, len(lines), PurePosixPath(file.path).name, None))
    chunks: list[Chunk] = []
    for start, end, title, node_id in spans:
        for piece_start, piece_end, piece_title in _fit(lines, start, end, title, MAX_TOKENS):
            text = "\n".join(lines[piece_start - 1 : piece_end])
            if not text.strip():
                continue
            chunks.append(
                Chunk(
                    id=chunk_id(file.path, piece_start, piece_end, text),
                    path=file.path,
                    kind=kind,
                    title=piece_title,
                    start_line=piece_start,
                    end_line=piece_end,
                    text=text,
                    content_hash=content_hash(text),
                    n_tokens=count_tokens(text),
                    node_id=None if kind == "doc" else node_id,
                )
            )
    chunks.sort(key=lambda c: (c.start_line, c.end_line, c.title))
    return chunks


# -- line helpers -----------------------------------------------------------------------------


def _trim(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """The span without blank lines at its edges, or None when it is all blank."""
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


def _paragraphs(lines: list[str], start: int, end: int) -> Iterator[tuple[int, int]]:
    """Runs of lines that end after a blank line (the blank lines stay with the run before)."""
    first = start
    for row in range(start, end):
        if not lines[row - 1].strip() and lines[row].strip():
            yield first, row
            first = row + 1
    yield first, end


def _pack(lines: list[str], start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Greedy: whole paragraphs up to ``budget`` tokens; a longer paragraph goes line by line."""
    units: list[tuple[int, int, int]] = []
    for p_start, p_end in _paragraphs(lines, start, end):
        tokens = [count_tokens(lines[row - 1]) for row in range(p_start, p_end + 1)]
        if sum(tokens) <= budget:
            units.append((p_start, p_end, sum(tokens)))
        else:
            units.extend((row, row, n) for row, n in zip(range(p_start, p_end + 1), tokens, strict=True))
    pieces: list[tuple[int, int]] = []
    piece_start, piece_end, used = units[0][0], units[0][1], units[0][2]
    for u_start, u_end, n in units[1:]:
        if used + n > budget:
            pieces.append((piece_start, piece_end))
            piece_start, used = u_start, 0
        piece_end = u_end
        used += n
    pieces.append((piece_start, piece_end))
    return pieces


def _fit(lines: list[str], start: int, end: int, title: str, limit: int) -> list[tuple[int, int, str]]:
    """The span trimmed, and cut into ``SPLIT_BUDGET`` pieces when it exceeds ``limit`` tokens."""
    trimmed = _trim(lines, start, end)
    if trimmed is None:
        return []
    start, end = trimmed
    if count_tokens("\n".join(lines[start - 1 : end])) <= limit:
        return [(start, end, title)]
    pieces = [t for p in _pack(lines, start, end, SPLIT_BUDGET) if (t := _trim(lines, *p)) is not None]
    if len(pieces) == 1:
        return [(pieces[0][0], pieces[0][1], title)]
    return [(s, e, f"{title} (part {i}/{len(pieces)})") for i, (s, e) in enumerate(pieces, 1)]


def _windows(lines: list[str], start: int, end: int, title: str, node_id: str | None) -> Iterator[Span]:
    """Windows of about ``WINDOW_LINES`` lines, each ending at the last blank line of its second half."""
    row = start
    while row <= end:
        stop = min(end, row + WINDOW_LINES - 1)
        if stop < end:
            for candidate in range(stop, row + WINDOW_LINES // 2 - 1, -1):
                if not lines[candidate - 1].strip():
                    stop = candidate
                    break
        yield row, stop, title, node_id
        row = stop + 1


# -- parsed code ------------------------------------------------------------------------------


# Comment lines right above a symbol go with it; what starts a comment (or an annotation) per language.
_COMMENTS = {
    "python": ("#",),
    "ruby": ("#",),
    "php": ("//", "#", "/*", "*"),
    "c": ("//", "/*", "*"),
    "cpp": ("//", "/*", "*", "template"),
    "rust": ("//", "/*", "*", "#["),
}
_DEFAULT_COMMENTS = ("//", "/*", "*", "@", "[")


def _symbol_spans(lines: list[str], parsed: ParsedFile, comments: tuple[str, ...]) -> list[Span]:
    n = len(lines)
    module: Node = parsed.symbols[0]
    by_id = {symbol.id: symbol for symbol in parsed.symbols}
    children: dict[str, list[Node]] = defaultdict(list)
    for symbol in parsed.symbols[1:]:
        parent = symbol.qualname.rpartition(".")[0]
        owner = by_id.get(f"{symbol.path}::{parent}") if parent else None
        # a member defined outside its type (a Go method, a Rust impl, C++'s Cls::m) is cut on its own
        inside = owner is not None and owner.start_line <= symbol.start_line <= owner.end_line
        children[owner.id if owner is not None and inside else module.id].append(symbol)
    module_title = f"{parsed.module or PurePosixPath(parsed.path).stem} (module code)"
    spans: list[Span] = []
    # (container, start, end): the module, then each class found inside it
    stack: list[tuple[Node, int, int]] = [(module, 1, n)]
    while stack:
        container, c_start, c_end = stack.pop()
        covered = c_start - 1
        leftovers: list[tuple[int, int]] = []
        for child in sorted(children.get(container.id, ()), key=lambda s: (s.start_line, s.end_line)):
            s_start, s_end = max(child.start_line, c_start), min(child.end_line, c_end)
            if s_start <= covered or s_start > s_end:
                continue  # overlapping or outside its container: its lines stay with the container
            while s_start - 1 > covered and lines[s_start - 2].lstrip().startswith(comments):
                s_start -= 1  # a comment right above a symbol belongs to it
            if s_start > covered + 1:
                leftovers.append((covered + 1, s_start - 1))
            if child.kind == "class":
                stack.append((child, s_start, s_end))
            else:
                spans.append((s_start, s_end, child.qualname, child.id))
            covered = s_end
        if covered < c_end:
            leftovers.append((covered + 1, c_end))
        if container.kind == "module":
            for start, end in leftovers:
                if (trimmed := _trim(lines, start, end)) is not None:
                    spans.extend(
                        (s, e, module_title, module.id) for s, e in _pack(lines, *trimmed, MODULE_BUDGET)
                    )
        else:
            spans.extend((start, end, container.qualname, container.id) for start, end in leftovers)
    return spans


# -- documents --------------------------------------------------------------------------------


def _sections(lines: list[str], headings: list[tuple[int, int, str]], default: str) -> list[Span]:
    """Sections from (line, level, text) headings; a title is the path of headings above it."""
    spans: list[Span] = []
    starts = [h[0] for h in headings]
    if not starts or starts[0] > 1:
        spans.append((1, (starts[0] - 1) if starts else len(lines), default, None))
    path: list[tuple[int, str]] = []
    for i, (line, level, text) in enumerate(headings):
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, text))
        end = starts[i + 1] - 1 if i + 1 < len(starts) else len(lines)
        spans.append((line, end, " > ".join(t for _, t in path if t) or default, None))
    return spans


def _markdown_sections(lines: list[str], default: str) -> list[Span]:
    headings: list[tuple[int, int, str]] = []
    fence: str | None = None
    for row, line in enumerate(lines, 1):
        opener = _FENCE.match(line)
        if fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                if not line.strip().lstrip(fence[0]):
                    fence = None
            continue
        if opener:
            fence = opener.group(1)
            continue
        heading = _ATX.match(line)
        if heading:
            text = _ATX_CLOSE.sub("", heading.group(2) or "").strip()
            headings.append((row, len(heading.group(1)), text))
    return _sections(lines, headings, default)


def _rst_sections(lines: list[str], default: str) -> list[Span]:
    headings: list[tuple[int, int, str]] = []
    styles: list[tuple[str, bool]] = []
    row = 0
    while row + 1 < len(lines):
        title, under = lines[row], lines[row + 1]
        adornment = _ADORNMENT.match(under)
        title_text = title.strip()
        if (
            adornment
            and title_text
            and not _ADORNMENT.match(title)
            and len(under.rstrip()) >= len(title.rstrip())
            and (row == 0 or not lines[row - 1].strip() or lines[row - 1].strip() == under.strip())
        ):
            over = row > 0 and lines[row - 1].strip() == under.strip()
            style = (adornment.group(1), over)
            if style not in styles:
                styles.append(style)
            start = row if over else row + 1  # 1-based: the overline, or the title line
            headings.append((start, styles.index(style) + 1, title_text))
            row += 2
            continue
        row += 1
    return _sections(lines, headings, default)
