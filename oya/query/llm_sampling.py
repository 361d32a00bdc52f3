"""A JSON grammar that costs a local model little: checked on the likeliest tokens first.

Theory of operation:

llama-cpp-python samples through a chain: penalties, then the grammar, then top-k, top-p,
temperature. The grammar sampler tests every token of the vocabulary against the grammar at
every step, and a code model's vocabulary is large (Qwen2.5: 151,936 tokens), so on a 2-core
CPU a grammar-constrained reply came out ~9x slower than a free one (4.5 vs 40 tokens a second,
docs/DECISIONS.md, issue 27): most of an answer's time went into the grammar, not the model.

``GrammarShortlist`` is put first in the chain. At each step it takes the ``SHORTLIST`` tokens
with the highest logits and asks the chain's own grammar sampler about those alone (applying
a grammar sampler changes nothing; only accepting a token advances it). If at least one is
allowed, the candidates become that shortlist, and the rest of the chain (the grammar again,
top-k 40, top-p...) runs on it: the token drawn is one the grammar allows and one the model
ranks high, as before. If none of them is allowed (rare: the grammar forces a token the model
did not expect), the full vocabulary goes through, as without the shortlist. Either way the
grammar decides; the shortlist only spares it tokens top-k would drop anyway.
"""

from __future__ import annotations

import ctypes
from typing import Any

SHORTLIST = 128  # > top-k's 40: penalties and the grammar may drop some before top-k


class GrammarShortlist:
    """The first sampler of a chain that also holds a grammar sampler (``bind``)."""

    def __init__(self, k: int = SHORTLIST) -> None:
        import llama_cpp
        import numpy as np

        self._llama_cpp = llama_cpp
        self._np = np
        self.k = k
        self.grammar: Any = None  # the chain's grammar sampler (a llama_sampler_p)
        self._small = (llama_cpp.llama_token_data * k)()
        self._small_view = np.ctypeslib.as_array(self._small)
        self._small_array = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self._small, ctypes.POINTER(llama_cpp.llama_token_data)),
            size=k,
            selected=-1,
            sorted=False,
        )
        self.steps = 0  # tokens sampled
        self.full_scans = 0  # of which the whole vocabulary went to the grammar

    def apply(self, cur_p: Any) -> None:
        arr = cur_p.contents
        n = int(arr.size)
        if self.grammar is None or n <= self.k:
            return
        self.steps += 1
        np = self._np
        full = np.ctypeslib.as_array(arr.data, shape=(n,))
        top = full[np.argpartition(full["logit"], n - self.k)[n - self.k :]].copy()
        self._small_view[:] = top
        self._small_array.size = self.k
        self._small_array.selected = -1
        self._small_array.sorted = False
        self._llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self._small_array))
        if not np.isfinite(self._small_view["logit"]).any():
            self.full_scans += 1  # nothing likely is allowed: the grammar sees everything
            return
        full[: self.k] = top
        arr.size = self.k
        arr.sorted = False


def shortlist_first(chain: Any) -> tuple[Any, GrammarShortlist | None]:
    """``chain`` (a ``llama_cpp._internals.LlamaSampler``) rebuilt with a ``GrammarShortlist``
    in front, if it has a grammar sampler; else ``chain`` unchanged and None."""
    import llama_cpp
    from llama_cpp._internals import LlamaSampler

    old = chain.sampler
    names = [
        llama_cpp.llama_sampler_name(llama_cpp.llama_sampler_chain_get(old, i))
        for i in range(llama_cpp.llama_sampler_chain_n(old))
    ]
    if b"grammar" not in names or chain.custom_samplers:
        return chain, None  # custom samplers' indices would shift: leave such a chain alone
    shortlist = GrammarShortlist()
    new = LlamaSampler()
    new.add_custom(shortlist.apply)
    for _ in names:  # move, in order: a removed sampler is no longer the old chain's to free
        llama_cpp.llama_sampler_chain_add(new.sampler, llama_cpp.llama_sampler_chain_remove(old, 0))
    shortlist.grammar = llama_cpp.llama_sampler_chain_get(new.sampler, 1 + names.index(b"grammar"))
    return new, shortlist


def shortlisting_llama() -> type:
    """A ``llama_cpp.Llama`` whose grammar-constrained sampling starts with a shortlist.

    ``last_shortlist`` is the shortlist of the latest generation (for tests and the bench).
    """
    from llama_cpp import Llama

    class ShortlistingLlama(Llama):
        last_shortlist: GrammarShortlist | None = None

        def _init_sampler(self, **kwargs: Any) -> Any:  # type: ignore[override]  # called with keywords only
            chain, shortlist = shortlist_first(super()._init_sampler(**kwargs))
            if shortlist is not None:
                self.last_shortlist = shortlist
            return chain

    return ShortlistingLlama
