"""What of a model's streamed reply reaches the reader: nothing degenerate, nothing uncited.

Theory of operation:

1. The reply is JSON with ``"citations"`` before ``"answer"`` (the order of ``ANSWER_SCHEMA``'s
   properties, which llama.cpp's grammar follows), so the sources are known before the first
   word of the answer. When the answer's key appears, the citations written so far are
   validated against the retrieved snippets; if none points inside them the reply is
   rejected then and there (``DegenerateReply``) and generation stops: no time goes into an
   answer that could not be shown. A server that writes the answer first has its text held
   back until the end, when its citations are known.
2. The answer text is checked as it grows (``degenerate_reason``): a phrase repeated
   ``REPEATS`` times in a row ("The answer is: The answer is: The answer is:"), a word
   repeated ``WORD_REPEATS`` times, a short unit repeated without blanks ("!!!!!!!!!!"), or a
   long text whose word 4-grams are mostly repeats. A hit stops generation too. At the end,
   an answer of fewer than ``MIN_WORDS`` words, one that stops on a colon, or one that only
   repeats the question is rejected the same way, and so is one that names code the
   retrieved snippets do not contain (``ungrounded_name``): it cannot be checked against them.
   So is an answer that shares no word with the question (``off_topic_reason``: a small model
   short of an answer copies a docstring sentence about something else), and one whose every
   kept citation is test code when the question is not about tests (``tests_only_reason``:
   checked with the citations, before the answer is written; a 1.5B model that read only a
   test described the test, not the code, bench/results/llm_survey_verdicts.json).
3. What passes is streamed through a delay line that holds back the last ``HOLD_WORDS``
   words, so a loop is caught before its repeats are printed; the rest is released only when
   every check has passed (``release``), or dropped (``ReplyGuard.discard``).

A rejected reply becomes the extractive answer with the reason as a one-line note
(``oya.query.llm``): a degenerate output is never shown as an answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from oya.core.answer import validate_citations
from oya.core.kinds import is_test_path, mentions_tests
from oya.core.results import Citation, RetrievalResult
from oya.errors import ModelError

REPEATS = 3  # a phrase of 2+ words seen this many times in a row is a loop
WORD_REPEATS = 4  # "the the the the"
MAX_PHRASE_WORDS = 16
MIN_WORDS = 3
DIVERSE_AFTER = 40  # words before the 4-gram diversity check applies
MIN_DIVERSITY = 0.5  # distinct word 4-grams / all word 4-grams
HOLD_WORDS = MAX_PHRASE_WORDS  # words held back while streaming: a loop of up to 8 words never shows twice
MAX_PROPOSED_CITATIONS = 20  # a server that ignores the schema cannot make validation slow

_UNIT_RUN = re.compile(r"(\S{1,8}?)\1{9,}")  # a short unit ten times without a blank
_WORD = re.compile(r"\S+")
_CITATIONS = re.compile(r'"citations"\s*:\s*\[')
_NORM = re.compile(r"[^\w]+")
# a code span opens and closes with the same run of backticks (``name``, as docstrings write them)
_BACKTICKED = re.compile(r"(`+)([^`\n]{1,200}?)\1(?!`)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE_SPELLING = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|[a-z][A-Z]")  # snake_case, camelCase
MIN_NAME = 3  # shorter names ("c", "ok") are too common to tell anything
STEM = 5  # letters a word is compared by: "links" and "link", "weights" and "weigh" agree
_WORD_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")  # snake_case and camelCase split
# words that say nothing of a question's subject
_STOP = frozenset(
    "about after also and are been before between both but can could did does doing done each for from "
    "had has have how into its just made make makes more most not off once only other out over same "
    "should some such than that the their them then there these they this those through too under "
    "until very was were what when where which while who why will with would you your".split()
)


class DegenerateReply(ModelError):
    """The model's reply is not an answer: it loops, is empty or cites nothing retrieved."""


def _norm(word: str) -> str:
    return _NORM.sub("", word.lower())


def _tail_loop(words: list[str]) -> str | None:
    """The phrase the text ends by repeating, if it does (``REPEATS`` / ``WORD_REPEATS`` times)."""
    norm = [_norm(w) for w in words[-MAX_PHRASE_WORDS * REPEATS :]]
    for n in range(1, MAX_PHRASE_WORDS + 1):
        times = WORD_REPEATS if n == 1 else REPEATS
        if len(norm) < n * times:
            break
        unit = norm[-n:]
        if not any(unit):
            continue
        if all(norm[-(i + 1) * n : len(norm) - i * n] == unit for i in range(1, times)):
            return " ".join(words[-n:])
    return None


def degenerate_reason(text: str) -> str | None:
    """Why ``text`` (an answer, perhaps still growing) is a degenerate output, or None."""
    words = _WORD.findall(text)
    loop = _tail_loop(words)
    if loop is not None:
        return f"the model's answer repeats itself ({_clip(loop)!r} over and over)"
    run = _UNIT_RUN.search(text)
    if run is not None:
        return f"the model's answer repeats {_clip(run.group(1))!r} over and over"
    if len(words) >= DIVERSE_AFTER:
        grams = [tuple(_norm(w) for w in words[i : i + 4]) for i in range(len(words) - 3)]
        if len(set(grams)) / len(grams) < MIN_DIVERSITY:
            return "the model's answer keeps repeating the same phrases"
    return None


def final_reason(text: str, question: str) -> str | None:
    """Why a finished answer is degenerate: the growing checks, and those only the end can tell."""
    reason = degenerate_reason(text)
    if reason is not None:
        return reason
    words = [w for w in _WORD.findall(text) if any(ch.isalpha() for ch in w)]
    if len(words) < MIN_WORDS:
        return f"the model's answer is too short to be one ({_clip(text.strip())!r})"
    if text.rstrip().endswith(":"):
        return "the model's answer stops before it says anything"
    if _norm(text) == _norm(question):
        return "the model's answer only repeats the question"
    return None


def code_corpus(result: RetrievalResult) -> str:
    """The retrieved code and its paths, lower-cased: what an answer's code names are checked in."""
    parts = [*(s.text for s in result.context.snippets), *(c.path for c in result.citations)]
    return "\n".join(parts).lower()


def ungrounded_name(text: str, corpus: str) -> str | None:
    """The first code name in the answer that the retrieved code does not contain, or None.

    A code name is an identifier written in backticks, or one that only code spells: with an
    underscore (``host_allowed``) or a capital inside (``ServeHTTP``). A small model that
    cannot find the answer in its excerpts tends to invent one with plausible names; an answer
    whose names all occur in the excerpts (or their paths) is at least about the code shown.
    Matching ignores case and accepts a part of a longer name (``allowed`` in ``host_allowed``),
    so a name still being written passes until it is whole. ``corpus`` is ``code_corpus``'s.
    """
    names = [n for m in _BACKTICKED.finditer(text) for n in _IDENT.findall(m.group(2))]
    names += [n for n in _IDENT.findall(_BACKTICKED.sub(" ", text)) if _CODE_SPELLING.search(n)]
    for name in names:
        if len(name.strip("_")) >= MIN_NAME and name.lower() not in corpus:
            return name
    return None


def subject_words(text: str) -> frozenset[str]:
    """The words of ``text`` that can name a subject, compared by their first ``STEM`` letters."""
    parts = (p.lower() for p in _WORD_PART.findall(text))
    return frozenset(p[:STEM] for p in parts if len(p) >= 3 and p not in _STOP)


def off_topic_reason(text: str, question: str) -> str | None:
    """Why ``text`` does not answer ``question``: it shares no word with it (None if it does)."""
    asked = subject_words(question)
    if asked and not asked & subject_words(text):
        return "the model's answer shares no word with the question, so it does not answer it"
    return None


def tests_only_reason(kept: tuple[Citation, ...], question: str) -> str | None:
    """Why an answer resting only on ``kept`` is not shown: all test code, for a question not
    about tests (None otherwise)."""
    if kept and all(is_test_path(c.path) for c in kept) and not mentions_tests(question):
        return "the model cited only test code for a question about the code itself"
    return None


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def proposed_citations(items: object) -> list[tuple[str, int | None]]:
    """``(path, line)`` pairs from the reply's ``"citations"`` value (malformed items skipped)."""
    proposed: list[tuple[str, int | None]] = []
    for item in items[:MAX_PROPOSED_CITATIONS] if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        line = item.get("line")
        proposed.append(
            (item["path"], line if isinstance(line, int) and not isinstance(line, bool) else None)
        )
    return proposed


def citations_before(buffer: str, answer_at: int) -> list[tuple[str, int | None]] | None:
    """The citations the reply wrote before its answer key (at ``answer_at``), or None if none."""
    m = _CITATIONS.search(buffer, 0, answer_at)
    if m is None:
        return None
    try:
        items, _ = json.JSONDecoder(strict=False).raw_decode(buffer, m.end() - 1)
    except json.JSONDecodeError:
        return None
    return proposed_citations(items)


def no_citation_reason(rejected: int) -> str:
    if rejected:
        return f"none of the model's {rejected} citation(s) points into the retrieved code"
    return "the model gave no citation"


@dataclass
class Checked:
    """A reply that passed: the answer text and its validated citations."""

    text: str
    citations: tuple[Citation, ...]
    rejected: int


class ReplyGuard:
    """Checks the answer text as it streams and passes on only what may be shown.

    ``on_answer_start(buffer, at)`` is called by the answer-text scanner when the answer's key
    appears at ``at`` in the raw reply; ``feed_answer`` gets the answer's decoded characters.
    ``emit`` receives released text (already link-filtered by the caller, or not).
    """

    def __init__(
        self, result: RetrievalResult, emit: Callable[[str], None] | None, question: str | None = None
    ) -> None:
        self.result = result
        self.emit = emit
        self.question = result.question if question is None else question
        self.answer = ""
        self.released = 0  # characters of self.answer passed to emit
        self.cleared = False  # the citations were validated before the answer
        self.corpus = code_corpus(result)

    def on_answer_start(self, buffer: str, at: int) -> None:
        proposed = citations_before(buffer, at)
        if proposed is None:
            return  # the answer comes first: wait for the end
        kept, rejected = validate_citations(proposed, self.result)
        if not kept:
            raise DegenerateReply(no_citation_reason(rejected))
        reason = tests_only_reason(kept, self.question)
        if reason is not None:
            raise DegenerateReply(reason)
        self.cleared = True

    def feed_answer(self, piece: str) -> None:
        self.answer += piece
        reason = degenerate_reason(self.answer) or self.grounding_reason(self.answer)
        if reason is not None:
            raise DegenerateReply(reason)
        if self.cleared and self.emit is not None:
            self._release(hold=True)

    def grounding_reason(self, text: str) -> str | None:
        """Why ``text`` cannot be checked against the retrieved code (``ungrounded_name``), or None.

        Checked as the text grows: a name is whole, at the latest, when the next word starts,
        so it is still held back (``HOLD_WORDS``) when it is found unknown.
        """
        name = ungrounded_name(text, self.corpus)
        if name is None:
            return None
        return f"the model's answer names {name!r}, which is not in the retrieved code"

    def _release(self, *, hold: bool) -> None:
        text = self.answer
        cut = len(text)
        if hold:
            starts = [m.start() for m in _WORD.finditer(text)]
            if len(starts) <= HOLD_WORDS:
                return
            cut = starts[-HOLD_WORDS]
        if cut > self.released and self.emit is not None:
            self.emit(text[self.released : cut])
            self.released = cut

    def release(self) -> None:
        """Pass on everything held back (call only once the whole reply has passed)."""
        self._release(hold=False)
