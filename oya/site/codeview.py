"""Source code as HTML lines with numbers and ``id="L<n>"`` anchors.

Theory of operation: every line of the file becomes one ``<span class="line" id="L<n>">``
holding a line-number link and the escaped text, so a citation ``#L12`` lands on the line
and a range ``#L10-L20`` can be highlighted by site.js. Colouring is optional: Pygments
(a dependency of rich, so always present with Oya) tokenises the file server-side and each
token is escaped and wrapped in a span with one of a handful of fixed class names; without
Pygments, or for very large files, the text is shown plain. No token text ever reaches the
HTML unescaped, and the line count is always exactly the file's (``stripnl`` is off).
"""

from __future__ import annotations

from markupsafe import Markup, escape

HIGHLIGHT_MAX_BYTES = 400_000

# language name in the index -> Pygments lexer alias (when they differ)
_LEXER_ALIASES = {"shell": "bash", "makefile": "make", "dockerfile": "docker", "markdown": "md"}


def _token_class(ttype: object) -> str:
    from pygments import token as t

    checks = (
        (t.Comment, "c"),
        (t.String.Doc, "sd"),
        (t.String, "s"),
        (t.Number, "m"),
        (t.Keyword, "k"),
        (t.Name.Builtin, "nb"),
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


def _highlighted_lines(text: str, language: str) -> list[str] | None:
    """Per-line HTML fragments, or None when Pygments is missing or has no lexer."""
    try:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - rich depends on pygments
        return None
    try:
        lexer = get_lexer_by_name(_LEXER_ALIASES.get(language, language), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    lines: list[str] = [""]
    for ttype, value in lexer.get_tokens(text):
        css = _token_class(ttype)
        parts = value.split("\n")
        for k, part in enumerate(parts):
            if k:
                lines.append("")
            if part:
                lines[-1] += f'<span class="{css}">{escape(part)}</span>' if css else str(escape(part))
    return lines


def render_code(text: str, language: str) -> Markup:
    """The file as numbered, anchored lines (to go inside ``<pre class="code"><code>``)."""
    raw = text.split("\n")
    if raw and raw[-1] == "":
        raw.pop()
    html_lines: list[str] | None = None
    if len(text) <= HIGHLIGHT_MAX_BYTES:
        html_lines = _highlighted_lines(text, language)
    if html_lines is None or len(html_lines) < len(raw):
        html_lines = [str(escape(line)) for line in raw]
    out = []
    for n, body in enumerate(html_lines[: len(raw)], 1):
        out.append(
            f'<span class="line" id="L{n}"><a class="ln" href="#L{n}" tabindex="-1" aria-hidden="true">{n}</a>{body}\n</span>'
        )
    return Markup("".join(out))
