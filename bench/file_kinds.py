"""Bench helpers around the core's file kinds (``oya.core.kinds``, issue 16 item 7).

The classification and the shipped prior (``code_first`` on the question's first line, the
``kinds`` stage) live in the core; here are the variants the benches compare beside it: the
prior on the whole question (``kind_prior``), a soft prior (``weigh_kinds``), and the share
of the top slots each kind takes (``slot_shares``).
"""

from __future__ import annotations

from collections.abc import Sequence

from oya.core.kinds import DEMOTED, NON_CODE, asked_kinds, code_first, file_kind

KINDS = ("source", "test", "doc", "changelog", "template", "other")  # what file_kind returns

__all__ = ["KINDS", "NON_CODE", "asked_kinds", "file_kind", "kind_prior", "slot_shares", "weigh_kinds"]


def kind_prior(paths: Sequence[str], question: str, demoted: Sequence[str] = DEMOTED) -> list[str]:
    """``paths`` with files of a ``demoted`` kind ``question`` does not ask about moved after the rest."""
    return code_first(paths, str, question, demoted)


def weigh_kinds(
    scores: dict[str, float], question: str, weight: float, demoted: Sequence[str] = DEMOTED
) -> dict[str, float]:
    """A soft prior: the score of a demoted kind's file times ``weight`` unless the question asks for it."""
    asked = asked_kinds(question)
    low = {k for k in demoted if k not in asked}
    return {p: s * weight if file_kind(p) in low else s for p, s in scores.items()}


def slot_shares(ranked: Sequence[str], k: int = 5) -> dict[str, float]:
    """Fraction of the first ``k`` slots taken by each kind (empty slots count as nothing)."""
    top = list(ranked[:k])
    return {kind: sum(1 for p in top if file_kind(p) == kind) / k for kind in KINDS}
