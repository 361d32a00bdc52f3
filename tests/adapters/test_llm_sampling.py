"""The grammar shortlist: the grammar is asked about the likeliest tokens, the vocabulary only
when none of them is allowed. A Python sampler stands in for llama.cpp's grammar sampler
(same ``llama_sampler_apply`` call: it sets a rejected token's logit to -inf); the candidate
array is built as llama.cpp builds it from a step's logits."""

from __future__ import annotations

import ctypes

import llama_cpp
import numpy as np
from llama_cpp._internals import CustomSampler

from oya.query.llm_sampling import SHORTLIST, GrammarShortlist

VOCAB = 5_000


def candidates(logits: np.ndarray) -> tuple[llama_cpp.llama_token_data_array, ctypes.Array]:
    data = (llama_cpp.llama_token_data * len(logits))()
    view = np.ctypeslib.as_array(data)
    view["id"] = np.arange(len(logits))
    view["logit"] = logits
    array = llama_cpp.llama_token_data_array(
        data=ctypes.cast(data, ctypes.POINTER(llama_cpp.llama_token_data)),
        size=len(logits),
        selected=-1,
        sorted=False,
    )
    return array, data


def fake_grammar(allowed: set[int]) -> tuple[CustomSampler, list[int]]:
    """A sampler that rejects every token not in ``allowed``, and counts what it was shown."""
    seen: list[int] = []

    def apply(cur_p: ctypes._Pointer) -> None:  # type: ignore[type-arg]
        arr = cur_p.contents
        view = np.ctypeslib.as_array(arr.data, shape=(arr.size,))
        seen.append(int(arr.size))
        view["logit"][~np.isin(view["id"], list(allowed))] = -np.inf

    return CustomSampler(apply), seen


def test_the_grammar_sees_only_the_likeliest_tokens_when_one_of_them_is_allowed() -> None:
    logits = np.random.default_rng(0).normal(size=VOCAB).astype(np.single)
    ranked = list(np.argsort(-logits))
    allowed = {int(ranked[5]), int(ranked[3000])}  # one likely, one far down
    grammar, seen = fake_grammar(allowed)
    shortlist = GrammarShortlist()
    shortlist.grammar = grammar.get_sampler()
    array, data = candidates(logits)
    shortlist.apply(ctypes.pointer(array))
    assert seen == [SHORTLIST]  # asked about the shortlist, not the vocabulary
    assert array.size == SHORTLIST and shortlist.full_scans == 0
    kept = np.ctypeslib.as_array(data)[:SHORTLIST]
    assert set(kept["id"].tolist()) == {int(t) for t in ranked[:SHORTLIST]}
    assert np.array_equal(
        kept["logit"], logits[kept["id"]]
    )  # the logits untouched: the chain's grammar masks them


def test_the_whole_vocabulary_goes_through_when_no_likely_token_is_allowed() -> None:
    logits = np.random.default_rng(1).normal(size=VOCAB).astype(np.single)
    unlikely = int(np.argmin(logits))
    grammar, seen = fake_grammar({unlikely})
    shortlist = GrammarShortlist()
    shortlist.grammar = grammar.get_sampler()
    array, data = candidates(logits)
    shortlist.apply(ctypes.pointer(array))
    assert array.size == VOCAB and shortlist.full_scans == 1 and shortlist.steps == 1
    view = np.ctypeslib.as_array(data)
    assert np.array_equal(view["logit"], logits) and np.array_equal(view["id"], np.arange(VOCAB))
    # the chain's grammar, next, sees every token and so still finds the one it allows
    llama_cpp.llama_sampler_apply(shortlist.grammar, ctypes.byref(array))
    assert seen == [SHORTLIST, VOCAB]
    assert np.flatnonzero(np.isfinite(view["logit"])).tolist() == [unlikely]
