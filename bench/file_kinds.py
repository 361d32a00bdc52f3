"""What kind of file a ranked path is, and whether a question asks for that kind (issue 16 item 7).

A bug report or fix description asks for code. The kinds below are what crowded the top of
``oya search --files`` on real bug reports: documentation, change logs, issue/PR templates and
tests. ``source`` is code in a programming language outside test/doc/example folders; ``other``
is everything else (build files, config, data).

This is a bench prototype: it ranks nothing itself, it labels paths so a bench can count slots
and try a file-kind prior (``kind_prior``). It becomes a core stage only if it wins.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

KINDS = ("source", "test", "doc", "changelog", "template", "other")
# the kinds a code question should not get in its top slots unless it asks for them
NON_CODE = ("doc", "changelog", "template")

SOURCE_EXTS = frozenset(
    """
    py pyi go rs ts tsx mts cts js mjs cjs jsx java kt kts scala c h cc cpp cxx hpp hh hxx
    m mm cs fs rb php swift dart lua pl pm r jl ex exs erl hs ml mli clj y l zig nim vue svelte
    sh bash zsh fish ps1 sql
    """.split()
)
DOC_EXTS = frozenset("md markdown rst txt adoc asciidoc textile rdoc org pod html htm tex".split())
_CHANGELOG = re.compile(r"^(change(s|log)?|history|news|release[-_ ]?notes?|releases|upgrad(e|ing))\b", re.I)
_DOC_DIRS = frozenset(
    "doc docs documentation site website guide guides man example examples sample samples".split()
)
_TEST_DIRS = frozenset(
    "test tests testing spec specs __tests__ testdata fixtures e2e bench benches benchmark benchmarks fuzz".split()
)
_TEST_NAME = re.compile(
    r"(^test_.*\.py$|_test\.\w+$|_tests\.py$|^conftest\.py$|\.(test|spec)\.\w+$|_spec\.rb$|Tests?\.(java|kt|php)$)"
)
_TEMPLATE_DIRS = ("ISSUE_TEMPLATE", "PULL_REQUEST_TEMPLATE")


def _ext(name: str) -> str:
    return name.rsplit(".", 1)[1].lower() if "." in name.lstrip(".") else ""


def file_kind(path: str) -> str:
    """One of ``KINDS`` for a repository-relative path, from its folders, name and extension."""
    parts = path.split("/")
    name, dirs = parts[-1], [d.lower() for d in parts[:-1]]
    if any(t in parts for t in _TEMPLATE_DIRS) or name.upper().startswith(
        ("ISSUE_TEMPLATE", "PULL_REQUEST_TEMPLATE")
    ):
        return "template"
    if _CHANGELOG.match(name):
        return "changelog"
    if any(d in _TEST_DIRS or "test" in d for d in dirs) or _TEST_NAME.search(name):
        return "test"
    ext = _ext(name)
    if ext in DOC_EXTS or (not ext and name.upper() in ("README", "LICENSE", "AUTHORS", "CONTRIBUTING")):
        return "doc"
    if any(d in _DOC_DIRS for d in dirs):
        return "doc"
    if ext in SOURCE_EXTS:
        return "source"
    return "other"


# words that make a question about a kind (then that kind keeps its place)
_ASKS = {
    "doc": re.compile(r"\b(docs?|documentation|readme|docstrings?|guide|tutorial|manual|man ?page)\b", re.I),
    "changelog": re.compile(r"\b(change ?log|changes file|release notes?|history file|news file)\b", re.I),
    "template": re.compile(r"\b(issue|pull request|pr) templates?\b", re.I),
    "test": re.compile(r"\btest(s|ing|ed)?\b|\bpytest\b|\bunittest\b|\bfixtures?\b|\bspecs?\b", re.I),
}


def asked_kinds(question: str) -> frozenset[str]:
    """The non-source kinds ``question`` names (docs, change logs, templates, tests)."""
    return frozenset(k for k, rx in _ASKS.items() if rx.search(question))


def kind_prior(
    paths: Sequence[str], question: str, demoted: Sequence[str] = NON_CODE + ("test",)
) -> list[str]:
    """``paths`` with files of a ``demoted`` kind the question does not ask about moved after the
    rest, order kept inside each group (a hard prior: source first)."""
    asked = asked_kinds(question)
    low = {k for k in demoted if k not in asked}
    first = [p for p in paths if file_kind(p) not in low]
    return first + [p for p in paths if file_kind(p) in low]


def weigh_kinds(
    scores: dict[str, float], question: str, weight: float, demoted: Sequence[str] = NON_CODE + ("test",)
) -> dict[str, float]:
    """A soft prior: the score of a demoted kind's file times ``weight`` unless the question asks for it."""
    asked = asked_kinds(question)
    low = {k for k in demoted if k not in asked}
    return {p: s * weight if file_kind(p) in low else s for p, s in scores.items()}


def slot_shares(ranked: Sequence[str], k: int = 5) -> dict[str, float]:
    """Fraction of the first ``k`` slots taken by each kind (empty slots count as nothing)."""
    top = list(ranked[:k])
    return {kind: sum(1 for p in top if file_kind(p) == kind) / k for kind in KINDS}
