"""Query analysis: intent, channel weights, and the lexical sub-query of a long question.

Theory of operation:

* Intent comes from a cheap rule-based classifier (regular expressions over the question):
  ``debug`` (errors, tracebacks, "bug", "fails"), ``lookup`` ("where is", "which file",
  "defined", a bare identifier), ``architecture`` ("architecture", "overall", "modules",
  "structure"), ``conceptual`` ("how", "why", "explain"), else ``general``. Each intent has
  channel weights for the fusion: lookups and debugging lean lexical (names matter),
  conceptual and architecture questions lean semantic and graph.
* A long question (a pasted bug report) drowns its few precise terms in prose. We pull out
  what identifies code — identifiers with ``_``/camelCase/dots, file paths, exception names,
  traceback frames — and the lexical and graph channels search those instead of every word;
  the semantic channel still embeds the text itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from oya.core.tokenize import tokenize

INTENTS = ("lookup", "debug", "conceptual", "architecture", "general")

# weights per channel for each intent: lexical (BM25), semantic (vectors), graph (names)
INTENT_WEIGHTS: dict[str, dict[str, float]] = {
    "lookup": {"lexical": 1.2, "semantic": 0.8, "graph": 1.0},
    "debug": {"lexical": 1.2, "semantic": 0.8, "graph": 0.8},
    "conceptual": {"lexical": 0.8, "semantic": 1.2, "graph": 0.8},
    "architecture": {"lexical": 0.7, "semantic": 1.1, "graph": 1.2},
    "general": {"lexical": 1.0, "semantic": 1.0, "graph": 0.8},
}

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

_IDENT = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"  # dotted names
    r"|[A-Za-z0-9_]*_[A-Za-z0-9_]+"  # snake_case
    r"|[a-z]+[A-Z][A-Za-z0-9]*"  # camelCase
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # PascalCase with 2+ humps
    r"|[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)"  # exception names
)
_PATH = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+\.\w+|[\w-]+\.(?:py|pyi|md|rst|js|ts|go|rs|java|toml|cfg|yaml|yml)\b"
)
_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in (\w+))?')

LONG_QUERY_TOKENS = 60


@dataclass(frozen=True, slots=True)
class QueryPlan:
    text: str  # what the semantic channel embeds
    intent: str
    weights: dict[str, float]
    lexical_tokens: tuple[str, ...]  # what the lexical channel searches
    identifiers: tuple[str, ...] = ()  # code names found in the question
    paths: tuple[str, ...] = ()  # file paths found in the question
    long: bool = False
    tokens: tuple[str, ...] = field(default=())  # every token of the question


def classify_intent(question: str) -> str:
    if _DEBUG.search(question) or _FRAME.search(question):
        return "debug"
    if _LOOKUP.search(question):
        return "lookup"
    words = question.split()
    if len(words) <= 2 and _IDENT.fullmatch(question.strip()):
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


def extract_identifiers(text: str) -> tuple[list[str], list[str]]:
    """Code identifiers and file paths named in free text, first occurrence order."""
    paths = list(dict.fromkeys(m.group(1) for m in _FRAME.finditer(text)))
    paths += [p for p in dict.fromkeys(_PATH.findall(text)) if p not in paths]
    idents = list(dict.fromkeys(m.group(3) for m in _FRAME.finditer(text) if m.group(3)))
    idents += [i for i in dict.fromkeys(_IDENT.findall(text)) if i not in idents and i not in paths]
    return idents, paths


def plan_query(
    question: str,
    *,
    intent: str | None = None,
    adaptive_weights: bool = True,
    long_query_identifiers: bool = False,
) -> QueryPlan:
    """Analyse ``question`` once; every channel reads the plan.

    A long question keeps every token in the lexical query (BM25's IDF already weighs its rare
    identifiers up); ``long_query_identifiers=True`` searches only its identifiers and paths.
    """
    text = question.strip()
    tokens = tuple(tokenize(text))
    chosen = intent or classify_intent(text)
    if chosen not in INTENTS:
        raise ValueError(f"intent must be one of {', '.join(INTENTS)}; got {chosen!r}")
    weights = dict(INTENT_WEIGHTS[chosen] if adaptive_weights else INTENT_WEIGHTS["general"])
    idents, paths = extract_identifiers(text)
    long = len(tokens) > LONG_QUERY_TOKENS
    lexical: tuple[str, ...] = tokens
    if long and long_query_identifiers and (idents or paths):
        # the precise part of a bug report: identifiers, paths, exception names
        precise = tokenize(" ".join(idents + paths))
        lexical = tuple(dict.fromkeys(precise))
    return QueryPlan(
        text=text,
        intent=chosen,
        weights=weights,
        lexical_tokens=lexical,
        identifiers=tuple(idents),
        paths=tuple(paths),
        long=long,
        tokens=tokens,
    )
