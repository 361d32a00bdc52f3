"""Query analysis: intent, channel weights, identifiers and paths named in the question.

Theory of operation:

* Intent comes from a cheap rule-based classifier (regular expressions over the question):
  ``debug`` (errors, tracebacks, "bug", "fails"), ``lookup`` ("where is", "which file",
  "defined", a bare identifier), ``architecture`` ("architecture", "overall", "modules",
  "structure"), ``conceptual`` ("how", "why", "explain"), else ``general``. The intent is
  reported (``SearchQuality.intent``); it does not change the channel weights: weights per
  intent gained nothing and cost connected-code coverage (docs/DECISIONS.md; the variant is
  ``bench/variants/query_plans.py``). Every question fuses with ``CHANNEL_WEIGHTS``.
* Identifiers (``_``/camelCase/dotted names, exception names, traceback frames) and file paths
  named in the question feed the graph channel. BM25 searches a long question (a pasted bug
  report) by its ``MAX_QUERY_TERMS`` rarest terms (``oya.core.bm25``): IDF already weighs the
  rare identifiers up (searching only the identifiers showed no gain; the variant is in
  ``bench/variants/query_plans.py``).
* Questions are untrusted text (a ``?ask=`` link asks on page load): every expression here runs
  in linear time on any input, a question over ``MAX_QUESTION_CHARS`` is refused (the CLI,
  ``Bundle.ask`` and the Ask panel condense it to that length first and say so,
  ``oya.core.report``), and extraction keeps bounded numbers of bounded names.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

from oya.core.tokenize import tokenize

INTENTS = ("lookup", "debug", "conceptual", "architecture", "general")

# the fusion's weight per channel (lexical: BM25, semantic: vectors, graph: names), for every
# question (bench/results/eval_quality.md: the intent-adaptive table lost)
CHANNEL_WEIGHTS: dict[str, float] = {"lexical": 1.0, "semantic": 1.0, "graph": 0.8}

_DEBUG = re.compile(
    r"\b(error|exception|traceback|bug|fail(s|ed|ing|ure)?|crash(es|ed)?|broken|raises?|"
    r"wrong|unexpected|stack ?trace|doesn'?t work|not working)\b|Error\b|Exception\b",
    re.IGNORECASE,
)
_LOOKUP = re.compile(
    r"^\s*(where|which (file|module|class|function)|find|locate|what file)\b|"
    r"\b(defined|definition|implemented|implementation of|declared)\b",
    re.IGNORECASE,
)
_ARCH = re.compile(
    r"\b(architecture|overall|overview|structure|design|components?|modules?|packages?|"
    r"layers?|flow|pipeline|organi[sz]ed)\b",
    re.IGNORECASE,
)
_CONCEPT = re.compile(r"^\s*(how|why|explain|describe|what happens|what does)\b", re.IGNORECASE)

# Longer questions are refused here (``retrieve`` raises); the CLI, ``Bundle.ask`` and the Ask panel
# condense them to this many characters first (``oya.core.report``: the title, errors, stack frames
# and lines naming code) and say so: a pasted bug report with its traceback fits, a pasted log file
# is condensed, and every stage's cost stays bounded. Extraction reads no further than this either.
MAX_QUESTION_CHARS = 20_000
MAX_NAME_CHARS = 256  # a longer "name" is data (a hash, a minified line), not a code name
MAX_NAMES = 100  # of each kind: the graph channel compares every path with its candidates

# Identifiers and paths, in linear time on any text. The old expressions were unanchored
# alternatives that findall retried from every character of a long word (quadratic: 32,000
# characters took 31 s). Now a plain character class cuts the text into maximal runs (read once;
# a repeated group would also grow the regex engine's backtracking stack with the run), runs
# longer than MAX_NAME_CHARS are dropped, and the rest are split and classified with anchored
# matches, whose backtracking is bounded by the run's length.
_NAME_RUN = re.compile(r"[A-Za-z0-9_.]+")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_NAME = re.compile(
    r"[A-Za-z0-9_]*_[A-Za-z0-9_]+"  # snake_case
    r"|[a-z]+[A-Z][A-Za-z0-9]*"  # camelCase
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # PascalCase with 2+ humps
    r"|[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)"  # exception names
)
_PATH_RUN = re.compile(r"[\w./-]+")
_WITH_EXT = re.compile(r"[\w.-]+\.\w+")  # .match: a path part's longest prefix ending in ".ext"
_SOURCE_EXT = frozenset("py pyi md rst js ts go rs java toml cfg yaml yml".split())
_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in (\w+))?')


@dataclass(frozen=True, slots=True)
class QueryPlan:
    text: str  # what the semantic channel embeds
    intent: str
    weights: dict[str, float]
    lexical_tokens: tuple[str, ...]  # what the lexical channel searches
    identifiers: tuple[str, ...] = ()  # code names found in the question
    paths: tuple[str, ...] = ()  # file paths found in the question


def question_too_long(n_chars: int, *, more: bool = False) -> str:
    """The one-line error for an over-long question (``more``: at least ``n_chars``, still unread)."""
    size = f"more than {n_chars - 1:,}" if more else f"{n_chars:,}"
    return (
        f"the question is {size} characters long; the limit is {MAX_QUESTION_CHARS:,}: "
        "keep the error message, the traceback and the names that matter"
    )


def classify_intent(question: str) -> str:
    if _DEBUG.search(question) or _FRAME.search(question):
        return "debug"
    if _LOOKUP.search(question):
        return "lookup"
    words = question.split()
    if len(words) <= 2 and is_identifier(question.strip()):
        return "lookup"
    if _ARCH.search(question) and _CONCEPT.search(question) is None:
        return "architecture"
    if _ARCH.search(question) and re.search(
        r"\b(architecture|overall|structure|organi[sz]ed)\b", question, re.I
    ):
        return "architecture"
    if _CONCEPT.search(question):
        return "conceptual"
    return "general"


def is_identifier(word: str) -> bool:
    """A code name: dotted (``os.path.join``), snake_case, camelCase, PascalCase or ``...Error``."""
    if len(word) > MAX_NAME_CHARS:
        return False
    return _DOTTED.fullmatch(word) is not None or _NAME.fullmatch(word) is not None


def _names_in(run: str) -> Iterator[str]:
    """The code names in one run of name characters and dots: a dotted name, or single names."""
    for dotted in run.split(".."):
        dotted = dotted.strip(".")
        if _DOTTED.fullmatch(dotted):
            yield dotted
        else:
            yield from (part for part in dotted.split(".") if _NAME.fullmatch(part))


def _paths_in(run: str) -> Iterator[str]:
    """The file paths in one run of path characters.

    With folders (``a/b/c.py``): up to the last part that has an extension. Without (or when no
    part after the first has one): each ``name.ext`` with a source extension (``utils.py``).
    """
    parts = [part for part in run.split("/") if part]  # "/a//b.py" names a/b.py
    for j in range(len(parts) - 1, 0, -1):
        m = _WITH_EXT.match(parts[j])
        if m:
            yield "/".join([*parts[:j], m.group()])
            return
    for part in parts:
        pieces = part.split(".")
        yield from (
            f"{name}.{ext}"
            for name, ext in zip(pieces, pieces[1:], strict=False)
            if name and ext in _SOURCE_EXT
        )


def _first(items: Iterable[str], exclude: Container[str] = ()) -> list[str]:
    """Distinct ``items`` in order, at most ``MAX_NAMES``, none longer than ``MAX_NAME_CHARS``."""
    out: dict[str, None] = {}
    for item in items:
        if len(item) <= MAX_NAME_CHARS and item not in exclude:
            out[item] = None
            if len(out) == MAX_NAMES:
                break
    return list(out)


def extract_identifiers(text: str, *, limit: int | None = MAX_QUESTION_CHARS) -> tuple[list[str], list[str]]:
    """Code identifiers and file paths named in free text, first occurrence order.

    Reads the first ``limit`` characters (None: all; every expression is linear anyway) and
    keeps at most ``MAX_NAMES`` of each kind. Traceback frames come first: their files are
    paths, their functions identifiers.
    """
    if limit is not None:
        text = text[:limit]
    frames = list(_FRAME.finditer(text))
    paths = _first(
        chain(
            (m.group(1) for m in frames),
            (p for run in _PATH_RUN.findall(text) if len(run) <= MAX_NAME_CHARS for p in _paths_in(run)),
        )
    )
    idents = _first(
        chain(
            (m.group(3) for m in frames if m.group(3)),
            (n for run in _NAME_RUN.findall(text) if len(run) <= MAX_NAME_CHARS for n in _names_in(run)),
        ),
        exclude=set(paths),
    )
    return idents, paths


def plan_query(question: str, *, intent: str | None = None) -> QueryPlan:
    """Analyse ``question`` once; every channel reads the plan.

    A question longer than ``MAX_QUESTION_CHARS`` raises ``ValueError``. ``intent`` replaces
    the classified intent (it is reported, not weighed).
    """
    text = question.strip()
    if len(text) > MAX_QUESTION_CHARS:
        raise ValueError(question_too_long(len(text)))
    tokens = tuple(tokenize(text))
    chosen = intent or classify_intent(text)
    if chosen not in INTENTS:
        raise ValueError(f"intent must be one of {', '.join(INTENTS)}; got {chosen!r}")
    idents, paths = extract_identifiers(text)
    return QueryPlan(
        text=text,
        intent=chosen,
        weights=dict(CHANNEL_WEIGHTS),
        lexical_tokens=tokens,
        identifiers=tuple(idents),
        paths=tuple(paths),
    )
