"""Path filters and test-code reweighing: which chunks a question may see, and how much.

* ``path_filter``: include/exclude globs over repository paths (``tests/*``, ``*.md``).
* ``weigh_tests``: test code scaled down unless the question asks about tests (tests repeat
  the names they test and crowd out the code itself).
* ``promote_clear_winner``: the semantic channel's first chunk first when its cosine clearly
  leads (fusion rewards agreement and would outvote the best evidence there is).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from oya.core.fusion import Fused
from oya.core.kinds import is_test_path


def promote_clear_winner(
    fused: Sequence[Fused],
    ranked: Sequence[str],
    scores: Mapping[str, float],
    lead: float,
    test_paths: Mapping[str, str] | None,
) -> list[Fused]:
    """Put the semantic channel's first chunk first when it leads its second by ``lead`` or more.

    Fusion rewards agreement: a chunk ranked fifth by two channels outscores one ranked first
    by one. When the embedding clearly prefers one chunk (cosine lead over the runner-up),
    that preference is the best evidence there is and should not be outvoted. Test code that
    is being weighed down (``test_paths`` given) is not promoted.
    """
    out = list(fused)
    if len(ranked) < 2 or scores.get(ranked[0], 0.0) - scores.get(ranked[1], 0.0) < lead:
        return out
    top = ranked[0]
    if test_paths is not None and is_test_path(test_paths.get(top, "")):
        return out
    at = next((i for i, f in enumerate(out) if f.id == top), None)
    if not at:  # already first, or not fused
        return out
    winner = out.pop(at)
    out.insert(0, replace(winner, score=max(winner.score, out[0].score)))
    return out


def weigh_tests(fused: Sequence[Fused], paths: Mapping[str, str], weight: float) -> list[Fused]:
    """Scale the fused score of test chunks by ``weight`` and re-sort (ties by id)."""
    out = [replace(f, score=f.score * weight) if is_test_path(paths.get(f.id, "")) else f for f in fused]
    out.sort(key=lambda f: (-f.score, f.id))
    return out


def _patterns(pattern: str) -> list[str]:
    """Glob patterns for one user pattern: "tests" and "tests/" mean the folder and below."""
    p = pattern.strip()
    start = 0
    while p.startswith("./", start):  # not lstrip("./"): that would eat the dot of ".github"
        start += 2
    p = p[start:].lstrip("/")
    if not any(ch in p for ch in "*?[") and not p.endswith((".py", ".md", ".rst")):
        p = p.rstrip("/")
        return [p, p + "/*"]
    return [p, p + "/*"] if p.endswith("/") else [p]


def path_filter(include: Sequence[str], exclude: Sequence[str]) -> Callable[[str], bool] | None:
    """A predicate over repository paths from glob patterns (``tests/*``, ``*.md``); None: no filter."""
    if not include and not exclude:
        return None
    inc = [q for p in include for q in _patterns(p)]
    exc = [q for p in exclude for q in _patterns(p)]

    def allowed(path: str) -> bool:
        if inc and not any(fnmatch.fnmatchcase(path, p) for p in inc):
            return False
        return not any(fnmatch.fnmatchcase(path, p) for p in exc)

    return allowed
