"""HIGH / MEDIUM / LOW confidence for a retrieval, with the reasons shown to readers.

Theory of operation: confidence is read from the evidence (``oya.core.evidence``), never from a
language model. The channels rank independently (BM25 words, embedding meaning, code names); when
the answer is right they tend to land on the same files, when the index does not hold it they
scatter. Evidence gaps are named, each in a sentence the reader sees:

* the first file is among the first results of fewer than ``low_agree`` channels;
* the channels disagree: no file of the answer's first five is among the first results of two;
* the question spells code names (identifiers, paths, traceback frames) and fewer than half of
  them occur in the retrieved code;
* a channel failed or was unavailable.

No hit, or ``low_gaps`` gaps, is LOW. HIGH needs no gap and the first file among the first
results of ``high_agree`` channels (all three: the semantic channel among them, so without
meaning-level evidence never HIGH). Anything else is MEDIUM. ``score`` is the share of those
checks passed, for display and sorting only.

Measured (bench/confidence_signals.py, on the commits set and the project's own eval): channel
agreement predicts a right answer on both; the best cosine, the first file's score margin and
"no channel ranks the first file first" did not carry over from one set to the other (a high
cosine or a wide margin was as often wrong), so they are reported, not used for the level.
"""

from __future__ import annotations

from dataclasses import dataclass

from oya.core.results import Confidence, Evidence, SearchQuality

DISCLAIMERS = {
    "HIGH": "Strong match: several signals agree. This is drawn from the code shown — check the cited "
    "lines before relying on it.",
    "MEDIUM": "Partial match: relevant code was found, but it may not cover the whole question. "
    "Verify against the cited code.",
    "LOW": "Weak match: the index may not hold the answer. Treat these results as leads, not as an answer.",
}
NOTHING = "nothing matched the question"


@dataclass(frozen=True, slots=True)
class ConfidenceRule:
    """The thresholds of the levels: channel counts, so they mean the same for any embedding model
    or score scale (measured: bench/confidence_signals.py; tables in README "Retrieval quality")."""

    high_agree: int = 3  # HIGH: this many channels (all three) have the first file among their first results
    low_agree: int = 2  # a gap: fewer channels than this have it (with two or more channels voting)
    low_gaps: int = 1  # this many gaps make LOW


def evidence_gaps(ev: Evidence, rule: ConfidenceRule) -> list[str]:
    """The evidence gaps of a retrieval, each as a sentence for the reader."""
    gaps: list[str] = []
    if ev.voters >= 2 and ev.convergence and ev.convergence[0] < min(rule.low_agree, ev.voters):
        alone = f" ({ev.top_channels[0]} search)" if len(ev.top_channels) == 1 else ""
        gaps.append(f"the first file is backed by {ev.convergence[0]} of {ev.voters} search channels{alone}")
    first = ev.convergence[0] if ev.convergence else 0
    if ev.voters > first >= min(rule.low_agree, ev.voters) and ev.leaders == 0:
        # a majority short of all, and none of them ranks the file first: the first place came
        # from fusing middling ranks (commits set: 13 of 19 misses LOW instead of 8; README)
        gaps.append(
            f"no search channel ranks the first file first, and {first} of {ev.voters} have it at all"
        )
    if ev.overlap is False or (ev.voters >= 2 and max(ev.convergence, default=0) <= 1):
        gaps.append("the search channels disagree: none of the first files is found by two of them")
    if ev.named and 2 * ev.named_found < len(ev.named):
        shown = ", ".join(ev.named[:3]) + (", …" if len(ev.named) > 3 else "")
        gaps.append(
            f"only {ev.named_found} of {len(ev.named)} names the question spells ({shown}) are in the code found"
        )
    return gaps


def _strengths(ev: Evidence) -> list[str]:
    out: list[str] = []
    if ev.margin is not None:
        out.append(f"first file scores {ev.margin:.2f}x the second")
    if ev.convergence:
        out.append(f"first file found by {ev.convergence[0]} of {ev.voters} channels")
    if ev.cosine is not None:
        out.append(f"best similarity {ev.cosine:.2f}")
    if ev.named:
        out.append(f"{ev.named_found} of {len(ev.named)} named identifiers found")
    return out


def assess_confidence(
    ev: Evidence, quality: SearchQuality, rule: ConfidenceRule | None = None, *, found: bool = True
) -> Confidence:
    """The level, its disclaimer and the reasons (gaps first) of a retrieval with evidence ``ev``."""
    rule = rule or ConfidenceRule()
    degraded = [f"{rep.name} channel {rep.status}" for rep in quality.degraded]
    if not found:
        return Confidence("LOW", 0.0, DISCLAIMERS["LOW"], (NOTHING, *degraded), (NOTHING, *degraded))
    gaps = evidence_gaps(ev, rule)
    low = len(gaps) >= rule.low_gaps
    backed = bool(ev.convergence) and ev.convergence[0] >= rule.high_agree
    checks = (not gaps, backed, ev.cosine is not None, not degraded)
    score = sum(checks) / len(checks)
    if low:
        level = "LOW"
    elif all(checks):
        level = "HIGH"
    else:
        level = "MEDIUM"
    gaps += degraded
    return Confidence(level, score, DISCLAIMERS[level], (*gaps, *_strengths(ev)), tuple(gaps))
