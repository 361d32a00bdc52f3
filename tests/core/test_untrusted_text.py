"""Every text the core parses is handled in linear time, and the query path survives any input.

Issue 11: a long one-word question ran in quadratic time (8,000 characters 3 s, 32,000 characters
31 s, 1 MB never finished) because identifier and path extraction retried unanchored expressions
from every character. Here each parser gets single tokens of 10 kB, 100 kB and 1 MB and
pathological mixes, and the CPU time it takes must grow like the input (a ratio measured in one
run, so the machine's speed and load cancel out; quadratic work gives ratios near 100, linear
near 10). The same file runs under Pyodide (tests/core_pyodide): the fuzzing there too, the
timing not (emscripten's process_time is clock() over wall time, and growing WebAssembly memory
makes 100 kB cost about 20x 10 kB even for a single linear regex, so a load spike decides the
ratio); the browser test tests/site/test_ask_limits.py times a long question in Pyodide instead.
"""

from __future__ import annotations

import functools
import random
import sys
import time
from collections.abc import Callable

import pytest
from core_corpus import Inventory, ask, build_inventory
from hypothesis import given, settings
from hypothesis import strategies as st

from oya.core.answer import first_sentence
from oya.core.diagram import sanitize_label
from oya.core.hidden import visible
from oya.core.query import (
    MAX_NAME_CHARS,
    MAX_NAMES,
    MAX_QUESTION_CHARS,
    classify_intent,
    extract_identifiers,
    is_identifier,
    plan_query,
)
from oya.core.report import condense_report
from oya.core.tokenize import count_tokens, split_identifier, tokenize, truncate_to_tokens

PYODIDE = sys.platform == "emscripten"
SIZES = (10_000, 100_000, 1_000_000)
MAX_RATIO = 30.0  # linear work: about 10 per step of 10x; quadratic: about 100
FLOOR = 0.002  # seconds: below this a timing is mostly noise, so it counts as this much

PARSERS: dict[str, Callable[[str], object]] = {
    "extract_identifiers (uncapped)": lambda s: extract_identifiers(s, limit=None),
    "extract_identifiers": extract_identifiers,
    "classify_intent": classify_intent,
    "is_identifier": is_identifier,
    "tokenize": tokenize,
    "split_identifier": split_identifier,
    "count_tokens": count_tokens,
    "truncate_to_tokens": lambda s: truncate_to_tokens(s, 10**9),
    "first_sentence": first_sentence,
    "sanitize_label": sanitize_label,
    "visible": visible,
    "visible (all hidden)": lambda s: visible("\u200b" * len(s)),  # every character a stand-in
    "condense_report": lambda s: condense_report(s, 20_000),
    "condense_report (lines)": lambda s: condense_report(s.replace("_", "\n"), 20_000),
}

# Single tokens that made the old expressions retry from every character, and what each kind of
# character class, separator and case change looks like repeated.
UNITS = ("aB_", "a.", "x.py/", 'File "')  # and "mix", every class of character at random


@functools.cache
def _text(unit: str, n: int) -> str:
    """``unit`` repeated to ``n`` characters; "mix" is a fixed-seed jumble instead (built once)."""
    if unit != "mix":
        return (unit * (n // len(unit) + 1))[:n]
    return _mix(n)


def _mix(n: int) -> str:
    """A fixed-seed jumble of identifier, path and traceback characters, few spaces."""
    rng = random.Random(11)
    alphabet = "aZ_./-:\"'()[]{}é\x00\x1b\u202e0 " + 'File "x.py", line 1, in f '
    return "".join(rng.choice(alphabet) for _ in range(n))


def _cpu(fn: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for _ in range(2 if len(text) < SIZES[1] else 1):
        t0 = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t0)
    return max(best, FLOOR)


@pytest.mark.skipif(PYODIDE, reason="wall-clock timer under Pyodide (see the module docstring)")
@pytest.mark.parametrize("name", sorted(PARSERS))
def test_parsers_run_in_linear_time(name: str) -> None:
    fn = PARSERS[name]
    for unit in (*UNITS, "mix"):
        label = f"{unit!r} * n"
        small, medium = _cpu(fn, _text(unit, SIZES[0])), _cpu(fn, _text(unit, SIZES[1]))
        # checked before the largest size: a quadratic parser fails here in seconds, not hours
        assert medium / small < MAX_RATIO, f"{name} on {label}: {SIZES[1]} chars cost {medium / small:.0f}x"
        large = _cpu(fn, _text(unit, SIZES[2]))
        assert large / medium < MAX_RATIO, f"{name} on {label}: {SIZES[2]} chars cost {large / medium:.0f}x"


def test_extraction_is_capped() -> None:
    many = " ".join(f"name_{i} dir/file_{i}.py" for i in range(1000))
    idents, paths = extract_identifiers(many)
    assert len(idents) == MAX_NAMES and len(paths) == MAX_NAMES
    assert idents[:2] == ["name_0", "file_0.py"] and paths[0] == "dir/file_0.py"
    long_name = "x_" + "y" * MAX_NAME_CHARS
    assert extract_identifiers(f"{long_name} and short_name") == (["short_name"], [])
    assert not is_identifier(long_name) and is_identifier(long_name[:MAX_NAME_CHARS])
    # extraction reads only the first MAX_QUESTION_CHARS characters unless told otherwise
    late = " " * MAX_QUESTION_CHARS + "late_name"
    assert extract_identifiers(late) == ([], [])
    assert extract_identifiers(late, limit=None) == (["late_name"], [])


def test_paths_and_names_in_runs() -> None:
    idents, paths = extract_identifiers(
        "see /usr/lib/a//b.py, pkg/mod.py/extra and README.md. also x.py-y and v1.2.3 and os.path..join_it"
    )
    # a path ends at its last part with an extension; "x.py-y" has none; "//" is one folder step
    assert paths == ["usr/lib/a/b.py", "pkg/mod.py", "README.md"]
    # dotted names split at "..", file names inside paths are names too, "v1.2.3" is a version
    assert idents == ["b.py", "mod.py", "x.py", "os.path", "join_it"]
    assert extract_identifiers("a.b.c.")[0] == ["a.b.c"]


def test_an_over_long_question_is_refused_with_one_line() -> None:
    plan_query("q" * MAX_QUESTION_CHARS)  # at the limit: fine
    with pytest.raises(ValueError, match=r"1,048,576 characters long; the limit is 20,000") as err:
        plan_query("q" * 1_048_576)
    assert "\n" not in str(err.value)


# -- fuzzing the query path ---------------------------------------------------------------------
_TRICKY = "aAzZ09_.-/\\:\"'`()[]{}<>@#$%&*+=!?,; \t\n\r\x00\x07\x1b\x7f\x85\x9b\u200b\u202e\u2028éßİı😀"
_TEXT = st.text(alphabet=st.sampled_from(_TRICKY), max_size=300) | st.text(max_size=200)
_LONG_TOKEN = st.builds(
    lambda unit, n: (unit * (n // max(len(unit), 1) + 1))[:n],
    st.text(alphabet=st.sampled_from(_TRICKY), min_size=1, max_size=6),
    st.integers(min_value=1, max_value=2_000 if PYODIDE else 6_000),
)
_QUESTION = st.one_of(_TEXT, _LONG_TOKEN, st.tuples(_TEXT, _LONG_TOKEN, _TEXT).map("".join))


@settings(max_examples=50 if PYODIDE else 150, deadline=None)
@given(_QUESTION)
def test_query_analysis_holds_its_invariants(question: str) -> None:
    idents, paths = extract_identifiers(question)
    assert len(idents) <= MAX_NAMES and len(paths) <= MAX_NAMES
    assert all(0 < len(x) <= MAX_NAME_CHARS for x in idents + paths)
    assert all(i in question for i in idents)
    assert not set(idents) & set(paths)
    if not question.strip():
        return
    if len(question.strip()) > MAX_QUESTION_CHARS:
        with pytest.raises(ValueError, match="the limit is"):
            plan_query(question)
        return
    plan = plan_query(question)
    assert plan.lexical_tokens == tuple(tokenize(plan.text))
    assert all(
        t and t.isascii() and (t.isalnum() or "_" in t) and t == t.lower() for t in plan.lexical_tokens
    )
    assert plan.identifiers == tuple(idents) and plan.paths == tuple(paths)


@pytest.fixture(scope="module")
def inventory() -> Inventory:
    return build_inventory()


@settings(max_examples=25 if PYODIDE else 80, deadline=None)
@given(question=_QUESTION)
def test_retrieval_answers_any_question(inventory: Inventory, question: str) -> None:
    if not question.strip():
        with pytest.raises(ValueError, match="empty"):
            ask(inventory, question)
        return
    result = ask(inventory, question, k=5)
    assert len(result.hits) <= 5
    assert result.context.tokens <= result.context.budget
    known = set(inventory.corpus.chunk_paths())
    assert {h.chunk.id for h in result.hits} <= known
    assert all(c.chunk_id in known for c in result.citations)
