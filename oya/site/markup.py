"""Minimal, safe rendering of Markdown and reStructuredText for the wiki.

Theory of operation: the text comes from the indexed repository, so it is untrusted.

* Only a small subset is recognised: headings, paragraphs, fenced/indented/literal code
  blocks, bullet and numbered lists, block quotes and rules; inline code, emphasis and links.
  Everything else (raw HTML included) is shown as escaped text; nothing passes through.
* Every text fragment goes through ``markupsafe.escape`` before any tag is added around it,
  and the only tags ever emitted are the fixed ones written here.
* A link keeps its ``href`` only if the caller's ``resolve`` turns the target into a URL
  (``http``/``https`` targets, or relative paths that name a file of the wiki); ``javascript:``,
  ``data:`` and anything unknown become plain text. Images are never loaded: their alt
  text is shown instead.
* Each block remembers the source lines it came from, and the HTML carries an empty
  ``<span id="L<n>">`` for every source line at the start of its block, so the line anchors
  that citations point at (``files/README.md.html#L12``) exist on rendered documents too.
* Characters that hide or reorder text (bidi controls, zero-width, tags) become marked stand-ins
  in every escaped text fragment (``oya.site.hidden.mark_html``); never in a link's ``href``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup, escape

from oya.site.hidden import mark_html

Resolver = Callable[[str], str | None]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$")
_RULE = re.compile(r"^ {0,3}([-*_])(\s*\1){2,}\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")
_RST_DIRECTIVE = re.compile(r"^\.\.\s+([\w-]+)::\s*(.*)$")

_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_MD_LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))*)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_RST_LINK = re.compile(r"`([^`<]+?)\s*<([^>`\s]+)>`__?")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")


@dataclass(frozen=True, slots=True)
class Block:
    kind: str  # h1..h6, p, code, ul, ol, quote, hr
    start: int  # first source line (1-based)
    end: int  # last source line
    lines: tuple[str, ...]  # raw text (items for lists)


def _list_block(lines: list[str], i: int, ordered: bool) -> tuple[Block, int]:
    """A bulleted or numbered list starting at line ``i``: its block and the next line index."""
    items: list[str] = []
    j = i
    while j < len(lines) and lines[j].strip():
        m = _BULLET.match(lines[j])
        if m:
            items.append(m.group(2))
        elif items:
            items[-1] += " " + lines[j].strip()
        j += 1
    return Block("ol" if ordered else "ul", i + 1, j, tuple(items)), j


def _no_links(_: str) -> str | None:
    return None


# -- inline -----------------------------------------------------------------------------------
def _emphasis(text: str) -> str:
    """Escape ``text`` and add <strong>/<em>; the regexes only see escaped text."""
    out = str(escape(text))
    out = _STRONG.sub(lambda m: f"<strong>{m.group(2)}</strong>", out)
    return mark_html(_EM.sub(lambda m: f"<em>{m.group(1)}</em>", out))  # stand-ins touch no tag


def _link(label: str, target: str, resolve: Resolver) -> str:
    url = resolve(target.strip())
    text = _emphasis(label) if label.strip() else mark_html(str(escape(target)))
    if url is None:
        return text
    external = url.startswith(("http://", "https://"))
    # no referrerpolicy attribute: every page's <meta name="referrer" content="no-referrer"> covers it
    rel = ' class=ext rel="noopener noreferrer nofollow"' if external else ""
    return f'<a href="{escape(url)}"{rel}>{text}</a>'


def render_inline(text: str, resolve: Resolver = _no_links, *, rst: bool = False) -> Markup:
    """One line (or joined paragraph) of inline markup as safe HTML."""
    pieces: list[str] = []
    pos = 0
    code = re.compile(r"``(.+?)``") if rst else _CODE_SPAN
    for m in code.finditer(text):
        pieces.append(_inline_links(text[pos : m.start()], resolve, rst))
        pieces.append(f"<code>{mark_html(escape(m.group(1) if rst else m.group(2).strip()))}</code>")
        pos = m.end()
    pieces.append(_inline_links(text[pos:], resolve, rst))
    return Markup("".join(pieces))


def render_docstring(text: str) -> Markup:
    """A docstring as escaped text with its ``code`` spans marked up (no links, no emphasis)."""
    pieces: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        pieces.append(str(escape(text[pos : m.start()])))
        pieces.append(f"<code>{escape(m.group(2))}</code>")
        pos = m.end()
    pieces.append(str(escape(text[pos:])))
    return Markup(mark_html("".join(pieces)))  # stand-ins touch no tag


def _inline_links(text: str, resolve: Resolver, rst: bool) -> str:
    pattern = _RST_LINK if rst else _MD_LINK
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        out.append(_autolinks(text[pos : m.start()], resolve))
        if rst:
            out.append(_link(m.group(1), m.group(2), resolve))
        elif m.group(1):  # an image: never loaded, its alt text stands in
            out.append(f'<span class="img-alt">[{_emphasis(m.group(2) or "image")}]</span>')
        else:
            out.append(_link(m.group(2), m.group(3), resolve))
        pos = m.end()
    out.append(_autolinks(text[pos:], resolve))
    return "".join(out)


def _autolinks(text: str, resolve: Resolver) -> str:
    out: list[str] = []
    pos = 0
    for m in _AUTOLINK.finditer(text):
        out.append(_emphasis(text[pos : m.start()]))
        out.append(_link(m.group(1), m.group(1), resolve))
        pos = m.end()
    out.append(_emphasis(text[pos:]))
    return "".join(out)


# -- block parsing ----------------------------------------------------------------------------
def _lines(text: str) -> list[str]:
    """Lines as the reader counts them (split on \\n only), so anchors match citations."""
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def parse_markdown(text: str) -> list[Block]:
    lines = _lines(text)
    blocks: list[Block] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            marker = fence.group(1)
            j = i + 1
            while j < n and not lines[j].strip().startswith(marker):
                j += 1
            blocks.append(Block("code", i + 1, min(j, n - 1) + 1, tuple(lines[i + 1 : j])))
            i = j + 1
            continue
        atx = _ATX.match(line)
        if atx:
            blocks.append(Block(f"h{len(atx.group(1))}", i + 1, i + 1, (atx.group(2),)))
            i += 1
            continue
        if _RULE.match(line):
            blocks.append(Block("hr", i + 1, i + 1, ()))
            i += 1
            continue
        if line.startswith(("    ", "\t")):
            j = i
            while j < n and (lines[j].startswith(("    ", "\t")) or not lines[j].strip()):
                j += 1
            while j > i and not lines[j - 1].strip():
                j -= 1
            body = tuple(ln[4:] if ln.startswith("    ") else ln.lstrip("\t") for ln in lines[i:j])
            blocks.append(Block("code", i + 1, j, body))
            i = j
            continue
        if line.lstrip().startswith(">"):
            j = i
            while j < n and lines[j].lstrip().startswith(">"):
                j += 1
            body = tuple(ln.lstrip()[1:].strip() for ln in lines[i:j])
            blocks.append(Block("quote", i + 1, j, body))
            i = j
            continue
        bullet = _BULLET.match(line)
        if bullet:
            block, i = _list_block(lines, i, bullet.group(1)[0].isdigit())
            blocks.append(block)
            continue
        j = i
        para: list[str] = []
        while j < n and lines[j].strip():
            if j > i and (_FENCE.match(lines[j]) or _ATX.match(lines[j]) or _BULLET.match(lines[j])):
                break
            setext = _SETEXT.match(lines[j])
            if setext and para:
                level = "h1" if setext.group(1)[0] == "=" else "h2"
                blocks.append(Block(level, i + 1, j + 1, (" ".join(para),)))
                para = []
                j += 1
                i = j
                break
            para.append(lines[j].strip())
            j += 1
        if para:
            blocks.append(Block("p", i + 1, j, (" ".join(para),)))
        i = max(j, i + 1)
    return blocks


def parse_rest(text: str) -> list[Block]:
    lines = _lines(text)
    blocks: list[Block] = []
    levels: list[str] = []  # underline characters in order of first appearance
    i = 0
    n = len(lines)

    def heading(char: str) -> str:
        if char not in levels:
            levels.append(char)
        return f"h{min(levels.index(char) + 1, 6)}"

    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        # overline + title + underline
        if _RST_UNDERLINE.match(line) and i + 2 < n and _RST_UNDERLINE.match(lines[i + 2]):
            blocks.append(Block(heading(line[0] * 2), i + 1, i + 3, (lines[i + 1].strip(),)))
            i += 3
            continue
        if (
            i + 1 < n
            and _RST_UNDERLINE.match(lines[i + 1])
            and len(lines[i + 1].rstrip()) >= len(line.rstrip())
        ):
            blocks.append(Block(heading(lines[i + 1][0]), i + 1, i + 2, (line.strip(),)))
            i += 2
            continue
        directive = _RST_DIRECTIVE.match(line)
        literal_follows = bool(directive and directive.group(1) in ("code-block", "code", "sourcecode"))
        if directive and not literal_follows:
            # other directives (note, toctree, image...) are shown as a quiet paragraph
            j = i + 1
            while j < n and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            body = " ".join(
                ln.strip() for ln in lines[i + 1 : j] if ln.strip() and not ln.strip().startswith(":")
            )
            head = f"{directive.group(1)}: {directive.group(2)}".strip().rstrip(":")
            blocks.append(Block("quote", i + 1, j, (head + (" — " + body if body else ""),)))
            i = j
            continue
        bullet = _BULLET.match(line)
        if bullet and not literal_follows:
            block, i = _list_block(lines, i, bullet.group(1)[0].isdigit())
            blocks.append(block)
            continue
        j = i
        para: list[str] = []
        if not literal_follows:
            while j < n and lines[j].strip():
                para.append(lines[j].strip())
                j += 1
            text_ = " ".join(para)
            literal_follows = text_.endswith("::")
            shown = text_
            if literal_follows:  # "Example::" reads "Example:"; a lone "::" disappears
                shown = text_[:-2].rstrip() if text_.endswith(" ::") or text_ == "::" else text_[:-1]
            if shown:
                blocks.append(Block("p", i + 1, j, (shown,)))
        else:
            j = i + 1
        if literal_follows:
            k = j
            while k < n and not lines[k].strip():
                k += 1
            start = k
            while k < n and (not lines[k].strip() or lines[k].startswith((" ", "\t"))):
                k += 1
            while k > start and not lines[k - 1].strip():
                k -= 1
            if k > start:
                literal = lines[start:k]
                indent = min(len(ln) - len(ln.lstrip()) for ln in literal if ln.strip())
                blocks.append(Block("code", start + 1, k, tuple(ln[indent:] for ln in literal)))
                j = k
        i = max(j, i + 1)
    return blocks


# -- HTML -------------------------------------------------------------------------------------
def render_blocks(
    blocks: list[Block], resolve: Resolver = _no_links, *, rst: bool = False, n_lines: int | None = None
) -> Markup:
    """Blocks as HTML. With ``n_lines``, each block starts with the anchor of the lines up to its end.

    One anchor per block, ``<span class=la id=L<first> data-to=<last>>``: site.js adds ids for the
    block's other lines (one span per line was a third of a rendered document's bytes).
    """
    out: list[str] = []
    next_line = 1

    def anchors(end: int) -> str:
        nonlocal next_line
        first, next_line = next_line, max(next_line, end + 1)
        if n_lines is None or first > end:
            return ""
        return f"<span class=la id=L{first}{f' data-to={end}' if end > first else ''}></span>"

    for b in blocks:
        marks = anchors(b.end)
        if b.kind.startswith("h"):
            body = render_inline(b.lines[0], resolve, rst=rst)
            out.append(f'<{b.kind} class="md-block">{marks}{body}</{b.kind}>')
        elif b.kind == "p":
            out.append(f'<p class="md-block">{marks}{render_inline(b.lines[0], resolve, rst=rst)}</p>')
        elif b.kind == "code":
            code = mark_html(escape("\n".join(b.lines)))
            out.append(f'<div class="md-block">{marks}<pre class="doc-code"><code>{code}</code></pre></div>')
        elif b.kind in ("ul", "ol"):
            items = "".join(
                f"<li>{marks if k == 0 else ''}{render_inline(item, resolve, rst=rst)}</li>"
                for k, item in enumerate(b.lines)
            )
            out.append(f'<{b.kind} class="md-block">{items}</{b.kind}>')
        elif b.kind == "quote":
            body = render_inline(" ".join(ln for ln in b.lines if ln), resolve, rst=rst)
            out.append(f'<blockquote class="md-block">{marks}{body}</blockquote>')
        elif b.kind == "hr":
            out.append(f'<div class="md-block">{marks}<hr></div>')
    if n_lines is not None and next_line <= n_lines:
        out.append(f"<div>{anchors(n_lines)}</div>")
    return Markup("\n".join(out))


def parse_document(text: str, language: str) -> list[Block]:
    return parse_rest(text) if language == "rst" else parse_markdown(text)


def render_document(text: str, language: str, resolve: Resolver = _no_links) -> Markup:
    """A Markdown or reST file as safe HTML with an anchor for every source line."""
    blocks = parse_document(text, language)
    return render_blocks(blocks, resolve, rst=language == "rst", n_lines=len(_lines(text)))
