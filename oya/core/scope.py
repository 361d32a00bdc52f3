"""A subject's scope prefix: the component a fix description or an issue title names.

Many projects write a commit's or an issue's subject as ``scope: what``, ``type(scope): what`` or
``[scope] what`` ("printer: fix CRLF handling", "fix(parser): honour value_terminator", "[hmr]
full reload"). The scope names a component: a folder (``crates/printer``), a package
(``clap_derive``) or a module (``help_template.rs``). ``scope_words`` reads it (commit types and
issue labels such as ``fix``, ``docs`` or ``BUG`` name no component), ``names_scope`` tells the
paths it names; the ``scope`` stage (``oya.core.stages.favour_scope``) moves those files up.
Fix commits file R@1 +1.8 points, Rust +16.1 (docs/DECISIONS.md, "A subject's scope moves its
files up").
"""

from __future__ import annotations

import re

from oya.core.kinds import first_line

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
