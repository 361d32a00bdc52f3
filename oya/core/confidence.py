"""HIGH / MEDIUM / LOW confidence for a retrieval, with the disclaimer shown to readers.

Theory of operation: three signals, each in [0, 1], observable in every runtime:

* similarity — the best cosine between the question and one of the top 3 hits, scaled so
  0.6 and above counts fully (MiniLM cosines for a right answer sit around 0.4–0.7);
* coverage — the share of the question's distinct lexical terms present in the top 3 hits;
* agreement — whether the best hit was found by more than one channel.

score = 0.4 * similarity + 0.4 * coverage + 0.2 * agreement (without the semantic channel,
coverage carries similarity's weight too). HIGH >= 0.65, MEDIUM >= 0.4, else LOW.
A failed or unavailable channel is named in the reasons. Confidence comes from retrieval,
never from a language model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from oya.core.query import QueryPlan
from oya.core.results import Confidence, Hit, SearchQuality
from oya.core.text import indexed_text
from oya.core.tokenize import tokenize

DISCLAIMERS = {
    "HIGH": "Strong match: several signals agree. This is drawn from the code shown — check the cited "
    "lines before relying on it.",
    "MEDIUM": "Partial match: relevant code was found, but it may not cover the whole question. "
    "Verify against the cited code.",
    "LOW": "Weak match: the index may not hold the answer. Treat these results as leads, not as an answer.",
}


def assess_confidence(
    plan: QueryPlan,
    hits: Sequence[Hit],
    channel_scores: Mapping[str, Mapping[str, float]],
    quality: SearchQuality,
) -> Confidence:
    if not hits:
        return Confidence("LOW", 0.0, DISCLAIMERS["LOW"], ("nothing matched the question",))
    top = hits[:3]
    reasons: list[str] = []
    semantic = channel_scores.get("semantic")
    similarity = 0.0
    if semantic is not None:
        best_cos = max((semantic.get(h.chunk.id, 0.0) for h in top), default=0.0)
        similarity = min(max(best_cos, 0.0) / 0.6, 1.0)
        reasons.append(f"best cosine {best_cos:.2f}")
    terms = set(plan.lexical_tokens)
    coverage = 0.0
    if terms:
        present: set[str] = set()
        for h in top:
            present.update(tokenize(indexed_text(h.chunk)))
        coverage = len(terms & present) / len(terms)
        reasons.append(f"{coverage:.0%} of the question's terms found")
    agreement = 1.0 if len([c for c in hits[0].channels if c != "graph-expansion"]) > 1 else 0.0
    if agreement:
        reasons.append("top result found by " + " + ".join(hits[0].channels))
    if semantic is not None:
        score = 0.4 * similarity + 0.4 * coverage + 0.2 * agreement
    else:
        score = 0.8 * coverage + 0.2 * agreement
        score = min(score, 0.64)  # without meaning-level evidence, never HIGH
    for rep in quality.degraded:
        reasons.append(f"{rep.name} channel {rep.status}")
    level = "HIGH" if score >= 0.65 else "MEDIUM" if score >= 0.4 else "LOW"
    return Confidence(level, score, DISCLAIMERS[level], tuple(reasons))
