"""HIGH / MEDIUM / LOW confidence for a retrieval, with the reasons shown to readers.

Theory of operation: confidence is read from the evidence (``oya.core.evidence``), never from a
language model. Evidence gaps are named, each in a sentence the reader sees:

* a weak best match: the best cosine among the first hits under ``ConfidenceRule.weak_cosine``;
* channels that disagree: no file is among the first results of two channels;
* names the question spells (identifiers, paths, traceback frames) none of which occurs in the
  retrieved code;
* a first file that fewer than ``agree`` channels have among their first results;
* a first file that no channel ranks first itself (its place comes from fusing middling ranks);
* a channel that failed or was unavailable (reported; it also keeps the level from HIGH).

No hit, or ``low_gaps`` gaps, is LOW. HIGH needs the first file to stand out — its score at
least ``stand_out`` times the second file's (or no second file) — with fewer than ``low_gaps``
gaps, every channel running, and the semantic channel among them (meaning-level evidence). Anything
else is MEDIUM. ``score`` is the share of those checks passed, for display and sorting only.

Measured on the commits set (bench/confidence_signals.py): the margin is the one signal that
separates right from wrong first places (every query whose first file scored 1.5x the second had
a gold file in its top 5); cosine, coverage and agreement each shift the odds a little, so they
make LOW only together.
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
    """The few thresholds of the levels, tuned on half of the commits set and checked on the other
    half (bench/confidence_signals.py; table in bench/results/commits_eval.md)."""

    # HIGH: the first file's score is at least this many times the second's (it stands out)
    stand_out: float = 1.5
    # a gap: the best all-MiniLM-L6-v2 cosine of the first hits under this
    weak_cosine: float = 0.5
    agree: int = 2  # a gap: fewer channels than this have the first file among their first results
    low_gaps: int = 2  # this many gaps make LOW (and keep a standing-out file from HIGH)


def evidence_gaps(ev: Evidence, rule: ConfidenceRule) -> list[str]:
    """The evidence gaps of a retrieval, each as a sentence for the reader."""
    gaps: list[str] = []
    if ev.cosine is not None and ev.cosine < rule.weak_cosine:
        gaps.append(f"weak best match (similarity {ev.cosine:.2f})")
    if ev.voters >= 2 and ev.convergence and ev.convergence[0] < min(rule.agree, ev.voters):
        alone = f" ({ev.top_channels[0]} search)" if len(ev.top_channels) == 1 else ""
        gaps.append(f"the first file is backed by {ev.convergence[0]} of {ev.voters} search channels{alone}")
    if ev.voters >= 2 and ev.convergence and ev.leaders == 0:
        gaps.append("no search channel ranks the first file first")
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
    stands_out = ev.margin is None or ev.margin >= rule.stand_out
    checks = (not low, stands_out, ev.cosine is not None, not degraded)
    score = sum(checks) / len(checks)
    if low:
        level = "LOW"
    elif all(checks):
        level = "HIGH"
    else:
        level = "MEDIUM"
    gaps += degraded
    return Confidence(level, score, DISCLAIMERS[level], (*gaps, *_strengths(ev)), tuple(gaps))
