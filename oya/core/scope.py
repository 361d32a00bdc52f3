"""A subject's scope prefix: the component a fix description or an issue title names.

Many projects write a commit's or an issue's subject as ``scope: what``, ``type(scope): what`` or
``[scope] what`` ("printer: fix CRLF handling", "fix(parser): honour value_terminator", "[hmr]
full reload"). The scope names a component: a folder (``crates/printer``), a package
(``clap_derive``) or a module (``help_template.rs``). ``scope_words`` reads it (commit types and
issue labels such as ``fix``, ``docs`` or ``BUG`` name no component), ``names_scope`` tells the
paths it names; the ``scope`` stage (``oya.core.stages.favour_scope``) moves those files up.
Fix commits file R@1 +1.8 points, Rust +16.1 (docs/DECISIONS.md, "A subject's scope moves its
files up").

A report can also name a file outright: a stack frame (``at x.Foo.bar(Foo.java:12)``), a panic
(``src/main.rs:4:5``), a link to a source line or "in ``lib/utils.js``". ``named_files`` reads those
file names (a name with a source extension, at the end of a path or alone) and ``names_file``
tells the paths they name; the ``named`` stage (``oya.core.stages.favour_named``) moves those files
up the way ``scope`` does (docs/DECISIONS.md, "Docs come after the code inside each channel's list").

A report names types more often than files: Java and Kotlin keep a public type in the file of its
name (``TreeTypeAdapter`` in ``TreeTypeAdapter.java``; C#, Swift, TypeScript and many C++ projects
too), and a report spells ```MockUtil.getMockMaker()``` or ``org.mockito.internal.util.MockUtil``
without the extension. ``type_names`` reads its compound identifiers (a lower-to-upper case change
inside: ``MockUtil``, ``getMockMaker``; never a capitalised word like ``Note`` nor an acronym like
``JSON``, which prose carries), ``names_type`` tells the source files whose stem is one; ``named``
moves them up with the named files (JVM issue reports R@5 +5.1; docs/DECISIONS.md, "A file named
after a type the report spells moves up").
"""

from __future__ import annotations

import re

from oya.core.kinds import SOURCE_EXTS, first_line

# ``type(scope): ...``, ``scope: ...``, ``scope/sub: ...``, ``[scope] ...``
_SCOPE = re.compile(r"^\s*(?:[A-Za-z]+\(([\w./, -]+)\)!?:|([\w./-]+):\s|\[([\w./ -]+)\])")
# commit types and issue labels: they say what kind of change or report, not where
NOT_SCOPES = frozenset(
    "fix fixes fixed feat feature features chore docs doc refactor perf test tests build ci style revert "
    "bug bugs bugfix hotfix question enhancement proposal rfc wip breaking deps security release "
    "enh maint tst api dep rel sty bld rev typo cleanup misc minor update regression "
    "error warning note todo".split()
)
_PIECES = re.compile(r"[_.\-]+")


def scope_words(question: str) -> frozenset[str]:
    """The component words the first line's scope prefix names (lower case), or none."""
    m = _SCOPE.match(first_line(question))
    if not m:
        return frozenset()
    scope = next(g for g in m.groups() if g)
    words = {w for w in re.split(r"[/,.\s]+", scope.lower()) if len(w) >= 2}
    return frozenset(words - NOT_SCOPES)


def names_scope(path: str, words: frozenset[str]) -> bool:
    """Whether a folder of ``path`` or its file's stem is a scope word or has one as a piece
    (``clap_derive`` for ``derive``, ``help_template.rs`` for ``help``)."""
    parts = path.lower().split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    return any(p in words or not words.isdisjoint(_PIECES.split(p)) for p in parts)


# a run of path characters; the file name is its last part (a URL, a frame's file, a bare name)
_PATH_RUN = re.compile(r"[\w./-]+")
MAX_NAMED_CHARS = 256  # a longer run is data (a hash, a minified line), not a path


def named_files(question: str) -> frozenset[str]:
    """The file names (``utils.js``, ``Foo.java``) the question spells with a source extension."""
    names: set[str] = set()
    for run in _PATH_RUN.findall(question):
        if len(run) > MAX_NAMED_CHARS:
            continue
        name = run.rstrip("./").rsplit("/", 1)[-1]
        stem, dot, ext = name.rpartition(".")
        if dot and stem.strip(".") and ext.lower() in SOURCE_EXTS:
            names.add(name)
    return frozenset(names)


def names_file(path: str, names: frozenset[str]) -> bool:
    """Whether ``path``'s file name is one of ``names`` (as spelled: ``JSON.java`` is not ``json.java``)."""
    return path.rsplit("/", 1)[-1] in names


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HUMP = re.compile(r"[a-z0-9][A-Z]")  # camelCase or PascalCase inside: not JSON, not Note
MAX_TYPE_CHARS = 80  # a longer identifier is data, not a type's name


def type_names(question: str) -> frozenset[str]:
    """The compound identifiers (``TreeTypeAdapter``, ``getMockMaker``) the question spells."""
    return frozenset(w for w in _IDENT.findall(question) if len(w) <= MAX_TYPE_CHARS and _HUMP.search(w))


def names_type(path: str, names: frozenset[str]) -> bool:
    """Whether ``path`` is a source file whose stem (its name before the first dot) is one of
    ``names``, as spelled (``MockUtil.java``, ``mergeConfig.test.js``; not ``MockUtil.md``)."""
    stem, _dot, ext = path.rsplit("/", 1)[-1].partition(".")
    return stem in names and ext.rsplit(".", 1)[-1].lower() in SOURCE_EXTS
