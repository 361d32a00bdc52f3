"""A repository's issue-template boilerplate dropped from a pasted report (issue 24): noise, not shipped.

A report filed through a repository's issue template repeats the template: a Markdown template's
headings and prompts ("#### What version of ripgrep are you using?", "**To Reproduce**"), an
issue form's field labels (GitHub renders each field as ``### <label>`` then the answer) and its
checkbox labels (``- [X] <label>``). The idea: those words (version, install, platform, the
project's name) pull unrelated files into the lexical and semantic channels, and the repository
tells us its own boilerplate, so drop it from the question. Measured (docs/DECISIONS.md, "Issue
templates' boilerplate stays in the question"): 36 of the 81 issue reports hold template lines at
their base commit (2 to 17 each), yet dropping them moved file R@5 by -1.9 [-5.6, +1.2] overall,
Rust +0.0, JVM +2.2, C -25.0 (jq's headings): a few short headings weigh little beside the report.

1. ``read_issue_templates``: the files GitHub reads as issue templates in a tree
   (``.github/ISSUE_TEMPLATE/*.md|yml|yaml`` but ``config.yml``; ``ISSUE_TEMPLATE.md`` at the root,
   in ``.github/`` or ``docs/``; any case), never through a symlink, each read to
   ``MAX_TEMPLATE_CHARS``, at most ``MAX_TEMPLATE_FILES``; their lines by ``collect_template_lines``.
2. ``template_lines``: a template's boilerplate lines, normalised (``normalise_line``). Markdown:
   every line of the body (front matter skipped; an HTML comment's lines too, reports often keep
   them). An issue form (YAML): every ``label:`` (fields and checkbox options) and the lines of a
   field's prefilled ``value:``, read line by line: the text is untrusted, nothing is parsed as
   YAML or executed. A repository keeps at most ``MAX_TEMPLATE_LINES`` lines.
3. ``strip_template_lines``: the question without its lines that equal a template line after the
   same normalisation, nor GitHub's ``_No response_`` for an empty form field. The title (first
   line) and lines inside code fences are always kept: they are the user's own.

Normalisation: lowercase, Markdown marks stripped (heading ``#``, list and checkbox marks,
quote ``>``, emphasis ``*`` ``_`` ``` ` ```, comment marks), trailing ``:`` dropped, whitespace
collapsed. A normalised line shorter than ``MIN_LINE_CHARS`` is never boilerplate ("1.", "ok").
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_TEMPLATE_CHARS = 64_000  # of one template file
MAX_TEMPLATE_LINES = 2_000  # of one repository's templates, all files together
MAX_TEMPLATE_FILES = 50
MIN_LINE_CHARS = 4
NO_RESPONSE = "no response"  # GitHub's "_No response_" for a form field left empty, normalised

_TEMPLATE_DIR = ".github/issue_template/"
_TEMPLATE_FILES = frozenset({"issue_template.md", ".github/issue_template.md", "docs/issue_template.md"})
_TEMPLATE_EXT = (".md", ".yml", ".yaml")

_MARKS = re.compile(r"<!--|-->|^\s*(?:[#>]+|[-*+]\s+\[[ xX]?\]|[-*+]|\d{1,3}[.)])\s+|[*_`]+")
_TRAILING = re.compile(r"[\s:]+$")
_SPACE = re.compile(r"\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_YAML_KEY = re.compile(r"^(\s*)(?:-\s+)?(label|value|type):\s?(.*)$")


def is_template_path(path: str) -> bool:
    """Whether GitHub reads the file at ``path`` (from the repository's root) as an issue template."""
    low = path.lower()
    if low in _TEMPLATE_FILES:
        return True
    if not low.startswith(_TEMPLATE_DIR) or "/" in low[len(_TEMPLATE_DIR) :]:
        return False
    name = low[len(_TEMPLATE_DIR) :]
    return name.endswith(_TEMPLATE_EXT) and name not in ("config.yml", "config.yaml")


def normalise_line(line: str) -> str:
    """``line`` lowercased, Markdown marks stripped, whitespace collapsed (the module docstring)."""
    text = _MARKS.sub(" ", line.lower())
    return _TRAILING.sub("", _SPACE.sub(" ", text).strip())


def _kept(lines: Iterable[str]) -> list[str]:
    out = (normalise_line(line) for line in lines)
    return [line for line in out if len(line) >= MIN_LINE_CHARS]


def _markdown_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[0].strip() == "---":  # front matter: name, about, title, labels
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
        lines = lines[end + 1 :]
    return _kept(lines)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _form_lines(text: str) -> list[str]:
    """An issue form's labels and prefilled values, read line by line (no YAML parser: the file
    is untrusted, and what GitHub renders into the report is only these keys)."""
    out: list[str] = []
    field_type = ""
    block_indent: int | None = None  # inside a ``value: |`` block: the key's indentation
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                out.append(line)
                continue
            block_indent = None
        m = _YAML_KEY.match(line)
        if m is None:
            continue
        key, value = m.group(2), _unquote(m.group(3))
        if key == "type":
            field_type = value
        elif key == "label":
            out.append(value)
        elif field_type != "markdown":  # a markdown field's value is shown on the form, not in the report
            if value in ("|", ">", "|-", ">-", "|+", ">+"):
                block_indent = len(m.group(1))
            else:
                out.append(value)
    return _kept(out)


def template_lines(path: str, text: str) -> list[str]:
    """The normalised boilerplate lines of the issue template at ``path`` (its ``text``)."""
    text = text[:MAX_TEMPLATE_CHARS]
    if path.lower().endswith((".yml", ".yaml")):
        return _form_lines(text)
    return _markdown_lines(text)


def collect_template_lines(templates: Iterable[tuple[str, str]]) -> list[str]:
    """The distinct boilerplate lines of a repository's templates (``(path, text)`` pairs), sorted,
    at most ``MAX_TEMPLATE_LINES`` (from the first files, in path order)."""
    out: dict[str, None] = {}
    for _path, lines in sorted((p, template_lines(p, t)) for p, t in templates)[:MAX_TEMPLATE_FILES]:
        for line in lines:
            if len(out) >= MAX_TEMPLATE_LINES:
                break
            out[line] = None
    return sorted(out)


@dataclass(frozen=True)
class Stripped:
    """A question without its template lines, and how many went."""

    text: str
    dropped: int

    def note(self) -> str:
        """One line for the reader."""
        s = "" if self.dropped == 1 else "s"
        return f"{self.dropped:,} line{s} of the repository's issue templates ignored"


def strip_template_lines(question: str, lines: Iterable[str] | frozenset[str]) -> Stripped:
    """``question`` without the lines equal to one of ``lines`` (normalised template lines) and
    GitHub's ``_No response_``; the first line and code fences are kept (the module docstring)."""
    known = lines if isinstance(lines, frozenset) else frozenset(lines)
    rows = question.split("\n")
    kept: list[str] = []
    dropped = 0
    in_fence = False
    for i, row in enumerate(rows):
        if _FENCE.match(row):
            in_fence = not in_fence
        elif i > 0 and not in_fence and row.strip():
            key = normalise_line(row)
            if key == NO_RESPONSE or (len(key) >= MIN_LINE_CHARS and key in known):
                dropped += 1
                continue
        kept.append(row)
    return Stripped(text="\n".join(kept) if dropped else question, dropped=dropped)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def _template_files(tree: Path) -> Iterator[tuple[str, Path]]:
    """``(path from the root, file)`` of the candidate template files, regular files only (the
    templates' folder matched in any case: ``.github/ISSUE_TEMPLATE/``, ``.github/issue_template/``)."""
    folders = ["", ".github", "docs"] + [
        f".github/{e.name}"
        for e in _entries(tree / ".github")
        if e.name.lower() == "issue_template" and e.is_dir(follow_symlinks=False)
    ]
    for folder in folders:
        for entry in _entries(tree / folder):
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_file(follow_symlinks=False) and is_template_path(rel):
                yield rel, Path(entry.path)


def _read_capped(path: Path) -> str | None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, MAX_TEMPLATE_CHARS).decode("utf-8", "replace").replace("\r\n", "\n")
    finally:
        os.close(fd)


def read_issue_templates(tree: Path) -> frozenset[str]:
    """The normalised boilerplate lines of the issue templates in the tree at ``tree``."""
    found: list[tuple[str, str]] = []
    for rel, path in _template_files(tree):
        if len(found) >= MAX_TEMPLATE_FILES:
            break
        try:
            text = _read_capped(path)
        except OSError:
            continue
        if text is not None:
            found.append((rel, text))
    return frozenset(collect_template_lines(found))
