"""What a retrieval returns: hits, files, quality report, confidence and citations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from oya.core.graph import Subgraph
from oya.core.records import Chunk, ChunkRef, Node
from oya.core.sitepaths import page_url as page_url  # re-exported: callers import it from here

CHANNEL_STATUSES = ("ran", "failed", "unavailable", "off")
CONFIDENCE_LEVELS = ("HIGH", "MEDIUM", "LOW")


@dataclass(frozen=True, slots=True)
class Hit:
    chunk: Chunk
    score: float
    channels: tuple[str, ...]  # channels that found it; "graph-expansion" for expanded ones
    ranks: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fused candidate before its text is read: ranking files, ordering kinds and picking the
    hits read only where it is; ``cap`` reads the text of the ones it picks (a sharded bundle
    fetches those chunks alone, not the whole pool's)."""

    chunk: ChunkRef
    score: float
    channels: tuple[str, ...]
    ranks: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class FileHit:
    path: str
    score: float
    chunks: tuple[str, ...]  # chunk ids that made the score, best first
    best_line: int = 1


@dataclass(frozen=True, slots=True)
class ChannelReport:
    name: str
    status: str
    found: int = 0
    used: int = 0
    detail: str = ""
    weight: float = 0.0
    agrees: int = 0  # of the answer's top files, how many are among this channel's first results

    def __post_init__(self) -> None:
        if self.status not in CHANNEL_STATUSES:
            raise ValueError(f"channel status must be one of {', '.join(CHANNEL_STATUSES)}")


@dataclass(frozen=True, slots=True)
class Evidence:
    """How strong the top matches are and how far the channels agree (``oya.core.evidence``)."""

    cosine: float | None  # best cosine among the first hits; None: no semantic channel
    coverage: float | None  # share of the question's distinct terms in the first hits; None: no terms
    convergence: tuple[int, ...]  # per top file: channels whose first results hold it
    voters: int  # channels that ran and returned something
    overlap: bool | None  # some file among two channels' first results; None: fewer than two voters
    named: tuple[str, ...] = ()  # code names spelled in the question
    named_found: int = 0  # of them, present in the retrieved candidates
    top_channels: tuple[str, ...] = ()  # channels that found the first hit
    leaders: int = 0  # channels whose own first file is the answer's first file
    margin: float | None = None  # the first file's score over the second's; None: fewer than two

    def to_dict(self) -> dict[str, Any]:
        return {
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "coverage": None if self.coverage is None else round(self.coverage, 4),
            "convergence": list(self.convergence),
            "voters": self.voters,
            "overlap": self.overlap,
            "named": list(self.named),
            "named_found": self.named_found,
            "top_channels": list(self.top_channels),
            "leaders": self.leaders,
            "margin": None if self.margin is None else round(self.margin, 4),
        }


NO_EVIDENCE = Evidence(None, None, (), 0, None)


@dataclass(frozen=True, slots=True)
class SearchQuality:
    intent: str
    channels: tuple[ChannelReport, ...]
    found: int  # distinct results the channels found
    used: int  # results kept in the answer
    expanded: int = 0  # nodes added by graph expansion
    fetch_depth: int = 0  # how deep each channel ranked before fusion
    hops: int = 0  # graph expansion hops used (0: no expansion)
    evidence: Evidence = NO_EVIDENCE

    @property
    def degraded(self) -> tuple[ChannelReport, ...]:
        return tuple(c for c in self.channels if c.status in ("failed", "unavailable"))

    def degraded_reason(self) -> str:
        """Why the answer ran on fewer channels than asked for ("" when none was missing)."""
        return "; ".join(
            f"{c.name} {c.status}" + (f": {c.detail}" if c.detail else "") for c in self.degraded
        )

    def summary(self) -> str:
        parts = []
        for c in self.channels:
            if c.status == "ran":
                parts.append(f"{c.name} ✓ ({c.found})")
            else:
                parts.append(f"{c.name} ✗ {c.status}" + (f": {c.detail}" if c.detail else ""))
        return (
            f"intent {self.intent}; channels: " + ", ".join(parts) + f"; found {self.found}, used {self.used}"
            f"; graph +{self.expanded} nodes" + self._agreement()
        )

    def _agreement(self) -> str:
        """The channels' agreement on the top files, e.g. "; top files found by 3/2/1/1/0 of 3 channels"."""
        ev = self.evidence
        if not ev.convergence:
            return ""
        return "; top files found by " + "/".join(map(str, ev.convergence)) + f" of {ev.voters} channels"


@dataclass(frozen=True, slots=True)
class Confidence:
    level: str
    score: float
    disclaimer: str
    reasons: tuple[str, ...] = ()  # what the level rests on, evidence gaps first
    gaps: tuple[str, ...] = ()  # the evidence gaps alone: why the level is not higher

    def __post_init__(self) -> None:
        if self.level not in CONFIDENCE_LEVELS:
            raise ValueError(f"confidence level must be one of {', '.join(CONFIDENCE_LEVELS)}")


@dataclass(frozen=True, slots=True)
class Citation:
    path: str
    title: str
    start_line: int
    end_line: int
    node_id: str | None
    url: str
    chunk_id: str

    @property
    def label(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True, slots=True)
class Snippet:
    citation: Citation
    text: str  # cut at line boundaries to fit the budget
    truncated: bool


@dataclass(frozen=True, slots=True)
class Context:
    mermaid: str
    snippets: tuple[Snippet, ...]
    tokens: int
    budget: int

    def render(self) -> str:
        """The context as one text block (what a language model is given)."""
        parts = ["```mermaid", self.mermaid, "```"] if self.mermaid else []
        for s in self.snippets:
            c = s.citation
            parts.append(f"--- {c.path} lines {c.start_line}-{c.end_line} ({c.title})")
            parts.append(s.text)
        return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    question: str
    hits: tuple[Hit, ...]
    files: tuple[FileHit, ...]
    subgraph: Subgraph
    context: Context
    confidence: Confidence
    quality: SearchQuality
    citations: tuple[Citation, ...]
    timings_ms: dict[str, float] = field(default_factory=dict)
    symbols: dict[str, Node] = field(default_factory=dict)  # the graph nodes of the citations

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for ``--json`` and for the browser)."""
        return {
            "question": self.question,
            "confidence": {
                "level": self.confidence.level,
                "score": round(self.confidence.score, 4),
                "disclaimer": self.confidence.disclaimer,
                "reasons": list(self.confidence.reasons),
                "gaps": list(self.confidence.gaps),
            },
            "search_quality": _quality_dict(self.quality),
            "degraded": bool(self.quality.degraded),
            "degraded_reason": self.quality.degraded_reason(),
            "hits": [_hit_dict(h) for h in self.hits],
            "files": [
                {"path": f.path, "score": round(f.score, 6), "line": f.best_line, "url": page_url(f.path)}
                for f in self.files
            ],
            "citations": [
                {
                    "path": c.path,
                    "title": c.title,
                    "start_line": c.start_line,
                    "end_line": c.end_line,
                    "node_id": c.node_id,
                    "url": c.url,
                }
                for c in self.citations
            ],
            "mermaid": self.context.mermaid,
            "snippets": [
                {
                    "path": s.citation.path,
                    "start_line": s.citation.start_line,
                    "url": s.citation.url,
                    "text": s.text,
                }
                for s in self.context.snippets
            ],
            "context_tokens": self.context.tokens,
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }


def _quality_dict(q: SearchQuality) -> dict[str, Any]:
    return {
        "intent": q.intent,
        "found": q.found,
        "used": q.used,
        "expanded": q.expanded,
        "summary": q.summary(),
        "fetch_depth": q.fetch_depth,
        "hops": q.hops,
        "evidence": q.evidence.to_dict(),
        "channels": [
            {
                "name": c.name,
                "status": c.status,
                "found": c.found,
                "used": c.used,
                "weight": c.weight,
                "agrees": c.agrees,
                "detail": c.detail,
            }
            for c in q.channels
        ],
    }


def _hit_dict(h: Hit) -> dict[str, Any]:
    return {
        "chunk_id": h.chunk.id,
        "path": h.chunk.path,
        "title": h.chunk.title,
        "kind": h.chunk.kind,
        "start_line": h.chunk.start_line,
        "end_line": h.chunk.end_line,
        "score": round(h.score, 6),
        "channels": list(h.channels),
        "url": page_url(h.chunk.path, h.chunk.start_line),
    }
