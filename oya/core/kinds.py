"""What kind of file a path is, and the file-kind prior (issue 16 item 7).

A bug report or fix description asks for code, yet documentation, change logs, issue/PR
templates and tests repeat its words and crowded the top of ``oya search --files`` on real fix
commits (bench/commits_eval.py). The prior moves files of those kinds after the code files
unless the question's first line asks for them (the subject line says what the question is
about; a long body mentions tests and docs in passing).

Kinds: ``source`` is code in a programming language outside test/doc/example folders;
``other`` is everything else (build files, config, data).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")

# the kinds a code question should not get in its top slots unless it asks for them
NON_CODE = ("doc", "changelog", "template")
DEMOTED = (*NON_CODE, "test")
# with build files and configuration too (issue 16 item 8: a Makefile variable holding the question)
DEMOTED_ALL = (*DEMOTED, "other")
# the answer's chunks: tests stay in place (a function's test callers are its connected code)
HIT_DEMOTED = (*NON_CODE, "other")

SOURCE_EXTS = frozenset(
    """
    py pyi go rs ts tsx mts cts js mjs cjs jsx java kt kts scala c h cc cpp cxx hpp hh hxx
    m mm cs fs rb php swift dart lua pl pm r jl ex exs erl hs ml mli clj y l zig nim vue svelte sql
    """.split()
)
# not here: shell scripts (.sh, .bash, .ps1...) are a project's build, release and CI tooling (gin's
# vet.sh), not the code a bug report is about: they are "other", after the code, unless the
# question names scripts (issue 24)
DOC_EXTS = frozenset("md markdown rst txt adoc asciidoc textile rdoc org pod html htm tex".split())
_CHANGELOG = re.compile(r"^(change(s|log)?|history|news|release[-_ ]?notes?|releases|upgrad(e|ing))\b", re.I)
_DOC_DIRS = frozenset("doc docs documentation example examples sample samples sandbox demo demos".split())
# a website's or manual's folder only at the top: below it these name code (oya/site, Django's
# contrib/sites, a CLI's man.go)
_TOP_DOC_DIRS = frozenset("site website guide guides man".split())
# folder names, not substrings: "_pytest" or "testing_tools" hold code, not tests
_TEST_DIRS = frozenset(
    "test tests testing spec specs __tests__ testdata fixtures e2e bench benches benchmark benchmarks fuzz".split()
)
_TEST_DIR_ENDS = ("_test", "_tests", "-test", "-tests", "unittests")
# Jest's folders beside the code, and Gradle / Kotlin Multiplatform test source sets, whose case
# tells them from a word: src/jvmTest, src/commonTest, src/androidUnitTest, src/testFixtures
_TEST_DIR_CASED = re.compile(
    r"^(__(mocks|fixtures|snapshots)__|[a-z][A-Za-z0-9]*[a-z0-9]Tests?|test[A-Z][A-Za-z0-9]*)$"
)
_TEST_NAME = re.compile(
    r"(^test_.*\.py$|_test\.\w+$|_tests\.py$|^conftest\.py$|\.(test|spec)\.\w+$|_spec\.rb$|Tests?\.(java|kt|php)$)"
)
_TEMPLATES = ("ISSUE_TEMPLATE", "PULL_REQUEST_TEMPLATE")
# configuration written in a programming language: tool configs (karma.conf.js, vite.config.ts,
# .eslintrc.js, Gruntfile.js), build scripts; they repeat a project's words without being its code.
# A tool's config is named "<tool>.config.<ext>" or "<tool>.conf.<ext>"; a module named
# ``_config.py`` or ``app-config.ts`` is the project's own code (httpx/_config.py: commits set)
_CONFIG_NAME = re.compile(
    r"^\.|\.(conf|config)\.\w+$|^(gruntfile|gulpfile|jakefile|rakefile|gemfile|makefile|dockerfile)\b",
    re.I,
)


def _ext(name: str) -> str:
    return name.rsplit(".", 1)[1].lower() if "." in name.lstrip(".") else ""


def _is_test(name: str, dirs: Sequence[str], cased: Sequence[str]) -> bool:
    """``dirs``: the folders in lower case; ``cased``: as written."""
    return (
        any(d in _TEST_DIRS or d.endswith(_TEST_DIR_ENDS) for d in dirs)
        or any(_TEST_DIR_CASED.match(d) for d in cased)
        or bool(_TEST_NAME.search(name))
    )


@lru_cache(maxsize=1 << 16)  # asked for every candidate of every question: a repository's paths repeat
def file_kind(path: str) -> str:
    """``source``, ``test``, ``doc``, ``changelog``, ``template`` or ``other`` for a
    repository-relative path, from its folders, name and extension."""
    parts = path.split("/")
    name, cased = parts[-1], parts[:-1]
    dirs = [d.lower() for d in cased]
    if any(t in parts for t in _TEMPLATES) or name.upper().startswith(_TEMPLATES):
        return "template"
    ext = _ext(name)
    if _CHANGELOG.match(name) and ext not in SOURCE_EXTS:  # history.py, changes.go are code
        return "changelog"
    if _is_test(name, dirs, cased):
        return "test"
    if ext in DOC_EXTS or (not ext and name.upper() in ("README", "LICENSE", "AUTHORS", "CONTRIBUTING")):
        return "doc"
    if any(d in _DOC_DIRS for d in dirs) or (dirs and dirs[0] in _TOP_DOC_DIRS):
        return "doc"
    if _CONFIG_NAME.search(name) or (dirs and dirs[0].startswith(".")):
        return "other"
    return "source" if ext in SOURCE_EXTS else "other"


# words that make a question about a kind (then that kind keeps its place)
_ASKS = {
    "doc": re.compile(r"\b(docs?|documentation|readme|docstrings?|guide|tutorial|manual|man ?page)\b", re.I),
    "changelog": re.compile(r"\b(change ?log|changes file|release notes?|history file|news file)\b", re.I),
    "template": re.compile(r"\b(issue|pull request|pr) templates?\b", re.I),
    "test": re.compile(r"\btest(s|ing|ed)?\b|\bpytest\b|\bunittest\b|\bfixtures?\b|\bspecs?\b", re.I),
    # build files and configuration: the question names the file or the tool
    "other": re.compile(
        r"\b(config(uration)?|settings|makefile|cmake|build (file|script|system)s?|docker(file)?|ya?ml|"
        r"toml|ini|json|gradle|maven|pom|npm|package\.json|cargo|go\.mod|pyproject|setup\.(py|cfg)|ci|"
        r"workflows?)\b",
        re.I,
    ),
}
# shell scripts are "other" too, but only script words ask for them: "the release script fails" asks
# for vet.sh, not for package.json; and only they keep a script in place
_SCRIPT_EXTS = frozenset("sh bash zsh fish ksh ps1 psm1 bat cmd".split())
_ASKS_SCRIPT = re.compile(r"\b(shell|bash|zsh|powershell|scripts?)\b", re.I)
# words of a question about type declarations: then ``x.d.ts`` beside ``x.js`` is what it asks for
_ASKS_TYPES = re.compile(r"\b(types?|typings?|typescript|typed|d\.ts|declarations?)\b", re.I)


def _is_script(path: str) -> bool:
    return _ext(path.rsplit("/", 1)[-1]) in _SCRIPT_EXTS


def asked_kinds(question: str) -> frozenset[str]:
    """The non-source kinds ``question`` names (docs, change logs, templates, tests)."""
    return frozenset(k for k, rx in _ASKS.items() if rx.search(question))


def is_test_path(path: str) -> bool:
    """Test code (or its data) by the usual conventions: a tests/ folder, test_*.py, *_test.go, ..."""
    return file_kind(path) == "test"


def mentions_tests(question: str) -> bool:
    return _ASKS["test"].search(question) is not None


def unnamed_copies(origins: Mapping[str, str], paths: Iterable[str], question: str) -> frozenset[str]:
    """Those of ``paths`` that are not source (``origins``: generated, vendored, amalgamated,
    copies) and that ``question`` does not name by their path: they rank after the source they
    copy. A name alone is not enough: ``json.hpp`` is the source's name too. Type declarations
    (``x.d.ts`` beside ``x.js``) stay in place when the first line speaks of types: "fix response
    headers types" is fixed in ``index.d.ts``; the project's tooling (``tools/cpplint/cpplint.py``
    in a C++ project) when the question names it (``cpplint``) or speaks of scripts."""
    if not origins:
        return frozenset()
    low = question.lower()
    types = _ASKS_TYPES.search(first_line(question)) is not None
    words = set(_WORDS.findall(low))
    scripts = _ASKS_SCRIPT.search(question) is not None
    return frozenset(
        p
        for p in paths
        if p in origins
        and p.lower() not in low
        and not (types and origins[p] == "declaration")
        and not (origins[p] == "tooling" and (scripts or _stem(p).lower() in words))
    )


_WORDS = re.compile(r"[\w-]+")


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


def first_line(question: str) -> str:
    """The subject line: the part of a question that decides which kinds it asks for."""
    return question.strip().split("\n", 1)[0]


def code_first(
    items: Sequence[T],
    path: Callable[[T], str],
    question: str,
    demoted: Sequence[str] = DEMOTED,
    copies: Container[str] = (),
) -> list[T]:
    """``items`` with those whose file is of a ``demoted`` kind ``question`` does not ask about,
    or one of ``copies``, moved after the rest, order kept inside each group (a hard prior: code
    first, and the source before its copies)."""
    asked = asked_kinds(question)
    low = {k for k in demoted if k not in asked}
    if not low and not copies:
        return list(items)
    scripts = "other" in low and _ASKS_SCRIPT.search(question) is not None
    kinds = [
        path(x) in copies or (file_kind(path(x)) in low and not (scripts and _is_script(path(x))))
        for x in items
    ]
    return [x for x, k in zip(items, kinds, strict=True) if not k] + [
        x for x, k in zip(items, kinds, strict=True) if k
    ]
