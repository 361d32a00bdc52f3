"""Source code as light HTML: the lines as text in ``<pre class="code">``, coloured tokens in short tags.

Theory of operation: the page holds the file's lines separated by newlines, each line's tags
closed on that line, inside ``<pre class="code" data-start=n>`` (``data-start`` only on a part that
does not begin at line 1). site.js turns them into the items of an ``<ol start=n>`` when the page
loads (moving the nodes, no HTML parsing), gives item i its id ``L<n>`` (line s + i) and brings a
citation ``#L12`` (or a range ``#L10-L20``) into view and highlights it; line numbers are the
list's own counter drawn by CSS. One newline per line instead of ``<li>`` (4 bytes) or an id on
every line (~12) or a numbered link (~110): networkx's 216k lines save 0.4 MB against bare items.
Without scripts the code reads as plain preformatted text, coloured, without numbers. Colouring
is optional: Pygments (a dependency of rich, so always present with Oya) tokenises the file and
each coloured token is escaped and wrapped in a tag: ``<b>`` for keywords, ``<u>`` for strings,
``<q>`` for docstrings (CSS removes its quotes), ``<i class=x>`` for the rest (one of a handful
of fixed one- or two-letter classes; neighbouring tokens of one class share a tag, plain tokens
get none). Text is escaped for element content (``& < >``; quotes need no escaping outside
attributes). Without Pygments, or for very large files, the text is shown plain. A line over
``LINE_MAX_CHARS`` (minified or generated text) is cut there, with a note saying how much is not
shown (a line of many hidden characters sooner: ``shown_chars``). No token text ever reaches the HTML unescaped, and the line count is always exactly the
file's (``stripnl`` is off). In a file that holds characters that hide or reorder text (bidi
controls, zero-width, tags: ``oya.core.hidden``), each run of them is a marked stand-in
(``oya.site.hidden``), and a token tag holding one never spans lines (site.js copies only the text
of a tag it splits per line).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from markupsafe import Markup

from oya.core.hidden import count_hidden, has_hidden, hidden_positions
from oya.site.hidden import HIDDEN_BYTES, mark_html

HIGHLIGHT_MAX_BYTES = 400_000
# Estimated bytes of code HTML on one page: with the page's other parts it stays under the 300 kB
# page budget (tests/site/test_page_weight.py measures the real pages).
PAGE_CODE_BYTES = 160_000
LINE_MAX_CHARS = 20_000  # a longer line (minified, generated) is cut: one line must not fill pages
_LINE_OVERHEAD = 1  # the newline


@dataclass(frozen=True)
class CodeSlice:
    """Lines ``first``..``last`` (1-based, inclusive) of a file, to be shown on one page."""

    text: str
    language: str
    first: int
    last: int

    def __post_init__(self) -> None:
        if not 1 <= self.first <= self.last + 1:
            raise ValueError(f"bad line range {self.first}..{self.last}")

    def html(self) -> Markup:
        lines = code_lines(self.text, self.language)[self.first - 1 : self.last]
        return wrap_lines(lines)


def escape_text(text: str) -> str:
    """Escape text for element content: ``&``, ``<`` and ``>`` (what markupsafe does, minus quotes)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_marked(text: str) -> str:
    """``escape_text``, with each run of hidden characters as a marked stand-in."""
    return mark_html(escape_text(text))


def shown_chars(line: str) -> int:
    """How many characters of a line are shown: ``LINE_MAX_CHARS``, fewer where the stand-ins of
    hidden characters (``HIDDEN_BYTES`` each) would make it weigh more than that many plain ones."""
    extra = 0
    for i in hidden_positions(line):
        extra += HIDDEN_BYTES
        if i + extra > LINE_MAX_CHARS:
            return i
    return min(len(line), LINE_MAX_CHARS)


def _estimate(line: str, marked: bool = False) -> int:
    """HTML bytes of a highlighted line, estimated from its text: escapes, token tags and, in a
    file that holds hidden characters (``marked``), their stand-ins."""
    line = line[: shown_chars(line)] if marked else line[:LINE_MAX_CHARS]
    escapes = 3 * (line.count("<") + line.count(">") + line.count("&")) + 4 * (
        line.count('"') + line.count("'")
    )
    marks = HIDDEN_BYTES * count_hidden(line) if marked else 0
    return len(line.encode("utf-8")) + escapes + marks + len(line) // 3 + _LINE_OVERHEAD


def split_parts(
    text: str, extra: dict[int, int] | None = None, budget: int = PAGE_CODE_BYTES
) -> tuple[int, ...]:
    """First line of each page-sized part of ``text``: a greedy cut on estimated HTML bytes.

    ``extra`` adds bytes at a line (the symbols that start there are listed on the same page).
    """
    extra = extra or {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    starts = [1]
    used = 0
    marked = has_hidden(text)
    for n, line in enumerate(lines, 1):
        cost = _estimate(line, marked) + extra.get(n, 0)
        if used and used + cost > budget:
            starts.append(n)
            used = 0
        used += cost
    return tuple(starts)


# language name in the index -> Pygments lexer alias (when they differ)
_LEXER_ALIASES = {"shell": "bash", "makefile": "make", "dockerfile": "docker", "markdown": "md"}


@cache
def _token_class(ttype: object) -> str:
    """The CSS class of a Pygments token type (cached: a file has millions of tokens, few types)."""
    from pygments import token as t

    checks = (
        (t.Comment, "c"),
        (t.String.Doc, "sd"),
        (t.String, "s"),
        (t.Keyword, "k"),
        (t.Name.Decorator, "nd"),
        (t.Name.Function, "nf"),
        (t.Name.Class, "nc"),
        (t.Operator.Word, "k"),
        (t.Name.Tag, "nt"),
        (t.Name.Attribute, "na"),
    )
    for parent, css in checks:
        if ttype in parent:
            return css
    return ""


@cache
def _lexer(language: str) -> Any:
    """The Pygments lexer for a language (looked up once: the lookup costs milliseconds), or None."""
    try:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - rich depends on pygments
        return None
    try:
        return get_lexer_by_name(_LEXER_ALIASES.get(language, language), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _runs(text: str, language: str) -> list[tuple[str, str]] | None:
    """(class, text) runs covering ``text`` exactly, neighbours of one class merged; None if no lexer."""
    lexer = _lexer(language)
    if lexer is None:
        return None
    runs: list[tuple[str, str]] = []
    for ttype, value in lexer.get_tokens(text):
        css = _token_class(ttype) if value.strip() else ""
        if runs and (runs[-1][0] == css or not value.strip()):
            runs[-1] = (runs[-1][0], runs[-1][1] + value)  # whitespace joins whatever precedes it
        else:
            runs.append((css, value))
    return runs


# the commonest token classes get a bare tag of their own: "<b>def</b>" is 8 bytes less than
# "<i class=k>def</i>" (networkx: ~67k keywords, 0.5 MB; comments and function names ~0.15 MB more)
_BARE_TAGS = {"k": "b", "s": "u", "sd": "q", "c": "s", "nf": "em"}


def _wrap(css: str, html: str) -> str:
    """Escaped text in its token's tag (no tag for plain text)."""
    if not css:
        return html
    tag = _BARE_TAGS.get(css)
    return f"<{tag}>{html}</{tag}>" if tag else f"<i class={css}>{html}</i>"


def _highlighted_lines(text: str, language: str, escape: Callable[[str], str]) -> list[str] | None:
    """Per-line HTML fragments, or None when Pygments is missing or has no lexer."""
    runs = _runs(text, language)
    if runs is None:
        return None
    lines: list[str] = [""]
    for css, value in runs:
        for k, part in enumerate(value.split("\n")):
            if k:
                lines.append("")
            # a line's indent inside a multi-line token (docstring, string) shows no colour: it
            # stays outside the tag (whitespace-only pieces get none), ~0.14 MB on networkx
            body = part.lstrip(" \t")
            lines[-1] += part[: len(part) - len(body)]
            if body:
                lines[-1] += _wrap(css, escape(body))
    return lines


@lru_cache(maxsize=4)  # a long file's parts are rendered one after another from one highlighting
def code_lines(text: str, language: str) -> list[str]:
    """The file's lines as HTML fragments (highlighted when possible), exactly one per line."""
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw.pop()
    # the stand-ins only where needed: a file without hidden characters is escaped as it always was
    escape = escape_marked if has_hidden(text) else escape_text
    html_lines: list[str] | None = None
    if len(text) <= HIGHLIGHT_MAX_BYTES:
        html_lines = _highlighted_lines(text, language, escape)
    if html_lines is None or len(html_lines) < len(raw):
        html_lines = [escape(line) for line in raw]
    html_lines = html_lines[: len(raw)]
    for n, line in enumerate(raw):
        shown = shown_chars(line) if len(line) > LINE_MAX_CHARS or escape is escape_marked else len(line)
        if shown < len(line):
            more = len(line) - shown
            html_lines[n] = f"{escape(line[:shown])}<i class=cut> … {more:,} more characters not shown</i>"
    return html_lines


# a docstring, string or comment run over several lines (blank ones too) is one tag again once the
# lines are joined (only text is inside these tags; site.js splits such a tag per line when it makes
# the items): networkx repeated "<q>…</q>" on each of ~48k docstring lines, ~0.3 MB
_SPLIT_TOKEN = re.compile(r"</(q|u|s)>((?:\n[ \t]*)+)<\1>")


def wrap_lines(lines: list[str]) -> Markup:
    """Lines for ``<pre class="code">``, one per newline (site.js makes them list items).

    Starts with a newline: an HTML parser drops one right after ``<pre>``, and it must not be the
    one that stands for an empty first line. A line holding a stand-in keeps its own tags: the
    lines around it are joined apart from it.
    """
    if not lines:
        return Markup("")
    groups: list[list[str]] = [[]]
    for line in lines:
        if "<span class=uni " in line:  # alone in its group: no tag is merged across it
            groups += [[line], []]
        else:
            groups[-1].append(line)
    return Markup("\n" + "\n".join(_SPLIT_TOKEN.sub(r"\2", "\n".join(g)) for g in groups if g))
