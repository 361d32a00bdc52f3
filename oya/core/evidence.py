"""The evidence behind a retrieval: how strong its top matches are and how far the channels agree.

Theory of operation: each channel ranks chunks on its own (BM25 words, embedding meaning, code
names). When an answer is right, independent channels tend to land on the same files; when the
index does not hold the answer, each channel grabs whatever it matches best, and they scatter.
So the evidence is read from the channels' own first ``TOP_N`` results, mapped to files:

* ``convergence``: for each of the answer's first ``TOP_FILES`` files, how many channels have
  it among their first ``TOP_N`` results (0 .. the channels that ran);
* ``leaders``: how many channels rank the answer's first file first themselves (none: the first
  place comes from fusing middling ranks);
* ``overlap``: whether any file is in the first ``TOP_N`` of two channels at all (None when
  fewer than two channels found anything: nothing to compare);
* ``margin``: the first file's score over the second's (how far the first file stands out);
* ``cosine``: the best embedding similarity among the first three hits (None without the
  semantic channel); ``coverage``: the share of the question's distinct words present in them;
* ``named`` / ``named_found``: code names the question spells (``parse_args``, ``HTTPError``,
  ``a.b.c``, traceback frames) and how many of them occur in the retrieved candidates.

Everything here is counted, not learned; ``oya.core.confidence`` turns it into a level and the
reasons a reader sees.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from oya.core.query import QueryPlan
from oya.core.records import Chunk
from oya.core.results import Candidate, Evidence, FileHit, Hit
from oya.core.text import indexed_text
from oya.core.tokenize import tokenize

TOP_N = 10  # a channel's first results that count as its vote
TOP_FILES = 5  # the answer's files whose convergence is reported
TOP_HITS = 3  # hits whose similarity and word coverage are read


def channel_files(
    rankings: Mapping[str, Sequence[str]], paths: Mapping[str, str], top_n: int = TOP_N
) -> dict[str, list[str]]:
    """Each channel's vote: the files of its first ``top_n`` chunks, in its order (channels with
    none left out)."""
    out: dict[str, list[str]] = {}
    for name, ranked in rankings.items():
        files = list(dict.fromkeys(paths[cid] for cid in ranked[:top_n] if cid in paths))
        if files:
            out[name] = files
    return out


def convergence(files: Sequence[FileHit], votes: Mapping[str, Sequence[str]]) -> tuple[int, ...]:
    """For each of the first ``TOP_FILES`` files, how many channels voted for it."""
    return tuple(sum(1 for v in votes.values() if f.path in v) for f in files[:TOP_FILES])


def agreements(files: Sequence[FileHit], votes: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """For each channel, how many of the first ``TOP_FILES`` files it voted for."""
    top = [f.path for f in files[:TOP_FILES]]
    return {name: sum(1 for p in top if p in v) for name, v in votes.items()}


def _overlap(votes: Mapping[str, Sequence[str]]) -> bool | None:
    if len(votes) < 2:
        return None
    seen: set[str] = set()
    for files in votes.values():
        if seen.intersection(files):
            return True
        seen.update(files)
    return False


def named_in(plan: QueryPlan) -> tuple[str, ...]:
    """The code names of the question, each as its last dotted part, lower case, once."""
    out: dict[str, None] = {}
    for ident in plan.identifiers:
        out[ident.rsplit(".", 1)[-1].lower()] = None
    for path in plan.paths:
        out[path.rsplit("/", 1)[-1].lower()] = None
    return tuple(n for n in out if len(n) > 2)


def _found(names: Sequence[str], pool: Sequence[Chunk], proven: Collection[str] = ()) -> int:
    """How many of ``names`` occur (as text) in the candidates' paths or indexed text; ``proven``:
    names known to occur without the text (``oya.core.stages.names_proven``), not looked up again."""
    rest = [n for n in names if n not in proven]
    if not rest:
        return len(names)
    haystack = "\n".join(f"{c.path}\n{indexed_text(c)}" for c in pool).lower()
    return len(names) - len(rest) + sum(1 for n in rest if n in haystack)


def gather_evidence(
    plan: QueryPlan,
    hits: Sequence[Hit],
    pool: Sequence[Chunk],
    files: Sequence[FileHit],
    votes: Mapping[str, Sequence[str]],
    scores: Mapping[str, Mapping[str, float]],
    proven: Collection[str] = (),
) -> Evidence:
    """The evidence of one retrieval (``pool``: the chunks of the fused candidates the hits were cut
    from, read when the question names code (``named_in``) and not all its names are ``proven``
    to occur in them without their text; ``votes``: ``channel_files`` of the channels' rankings)."""
    top = hits[:TOP_HITS]
    semantic = scores.get("semantic")
    cosine = None
    if semantic is not None:
        cosine = max((semantic.get(h.chunk.id, 0.0) for h in top), default=0.0)
    terms = set(plan.lexical_tokens)
    coverage = None
    if terms:
        present: set[str] = set()
        for h in top:
            present.update(tokenize(indexed_text(h.chunk)))
        coverage = len(terms & present) / len(terms)
    named = named_in(plan)
    return Evidence(
        cosine=cosine,
        coverage=coverage,
        convergence=convergence(files, votes),
        voters=len(votes),
        overlap=_overlap(votes),
        named=named,
        named_found=_found(named, pool, proven),
        leaders=sum(1 for v in votes.values() if files and v[0] == files[0].path),
        margin=files[0].score / files[1].score if len(files) > 1 and files[1].score > 0 else None,
        top_channels=tuple(c for c in hits[0].channels if c != "graph-expansion") if hits else (),
    )


def names_proven(
    plan: QueryPlan, pool: Sequence[Candidate], names_in_text: Callable[[list[str], list[str]], set[str]]
) -> tuple[str, ...]:
    """The question's code names (``named_in``) known to occur in the pool's paths or text without
    reading the text: in a candidate's path, or in its text as the corpus knows it
    (``Corpus.names_in_text``: a sharded bundle's postings already fetched). The evidence counts
    them found as its haystack would (a name holds no newline, so it cannot span two candidates)."""
    names = [n for n in named_in(plan) if "\n" not in n]
    paths = [h.chunk.path.lower() for h in pool]
    proven = {n for n in names if any(n in p for p in paths)}
    rest = [n for n in names if n not in proven]
    if rest:
        proven |= names_in_text([h.chunk.id for h in pool], rest) & set(rest)
    return tuple(n for n in names if n in proven)
