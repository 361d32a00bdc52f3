"""A losing variant, kept runnable: light suffix folding in the lexical channel (docs/quality.md,
ablation "suffix folding on (lexical)": mixed, so the tokenizer ships without it).

``with_folds`` adds each token's folded form beside it; ``FoldedBM25Channel`` is the core's BM25
in memory over the index's stored tokens with their folds, the question's tokens folded alike.
``bench/eval_quality.py`` swaps it in for the lexical channel. (Was ``oya.core.tokenize``.)
"""

from __future__ import annotations

from collections.abc import Sequence

from oya.core.query import QueryPlan
from oya.store.index import Index
from tests.core.core_corpus import bm25_index


def fold_suffix(token: str) -> str:
    """A light English suffix fold: plural ``-s``/``-es``/``-ies``, ``-ed``, ``-ing``, final ``-e``.

    Deliberately weaker than Porter (no ``-ation``, ``-ize``...): code names must not collide,
    and only alphabetic tokens of 5+ letters are touched (``bus``, ``is``, ``ids`` stay).
    """
    if len(token) < 5 or not token.isalpha():
        return token
    stem = token
    if token.endswith("ies"):
        stem = token[:-3] + "y"
    elif token.endswith(("sses", "xes", "ches", "shes")):
        stem = token[:-2]
    elif token.endswith("s") and not token.endswith(("ss", "us", "is")):
        stem = token[:-1]
    elif token.endswith("ing") and len(token) >= 6:
        stem = token[:-3]
    elif token.endswith("ed") and len(token) >= 5:
        stem = token[:-2]
    # a final e goes too, so create / creates / created / creating all meet at "creat"
    if stem.endswith("e") and len(stem) >= 5:
        stem = stem[:-1]
    return stem


def with_folds(tokens: list[str] | tuple[str, ...]) -> list[str]:
    """``tokens`` plus, after each one its fold changes, the folded form as an extra token.

    The exact token still matches exactly; the fold lets ``nodes`` meet ``node``, ``sorted``
    meet ``sort``.
    """
    out: list[str] = []
    for tok in tokens:
        out.append(tok)
        folded = fold_suffix(tok)
        if folded != tok:
            out.append(folded)
    return out


class FoldedBM25Channel:
    """The core's BM25 over tokens with light suffix folds added (``with_folds``), in memory.

    What the lexical channel would rank if the tokenizer folded suffixes: the same formula as
    ``DuckBM25Channel`` (they are parity-tested), over the index's stored tokens plus folds.
    """

    name = "lexical"

    def __init__(self, index: Index) -> None:
        self.bm25 = bm25_index((cid, with_folds(toks)) for cid, toks in index.chunk_token_lists())

    def search(self, plan: QueryPlan, vector: Sequence[float] | None, k: int) -> list[tuple[str, float]]:
        if not plan.lexical_tokens:
            return []
        return self.bm25.search(with_folds(plan.lexical_tokens), k)
