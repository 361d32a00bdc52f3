"""Survey of local GGUF models for `oya ask --llm` (issue 27): speed and judged answers.

Theory of operation:

* Questions: ``bench/llm_survey_questions.json``, 31 questions over three repositories in two
  languages (this repository and click in Python, gin in Go), each with an expected answer
  written from the code before any model ran.
* Trees and indexes: each repository's source tree (``--tree NAME=PATH``) is indexed once with
  ``pipelines.build.run_build`` and the real embedder into ``--work/index/NAME``.
* Each model (``--model PATH``, repeatable) is loaded through ``LlamaAnswerer.load`` with
  the settings ``oya ask --llm`` uses, afresh for every question (``load_s`` per answer), as a
  new ``oya ask`` process does: the system prompt's KV cache is then restored from disk too. Each question is retrieved with the answerer's own
  retrieval options (k = 8, the local model's context budget) and answered through
  ``answer_stream``, the code path of ``oya ask --llm``. A subclass tees the streamed pieces
  (``_stream`` only; the guard, parsing and citation checks are the answerer's), so the raw
  reply's proposed citations can be counted valid or not, and the time of the first word the
  reader sees is taken from the ``on_token`` callback.
* Every model gets the same generous time limit (``SURVEY_LIMIT``), so slow answers are
  measured, not cut. Times are per question: retrieval, first word shown (from the start of ``answer_stream``),
  whole answer, and end to end = retrieval + answer + the model's load time (the embedder's
  load is not included). The first load of a run may read the model file from disk (a cold page
  cache: ~5 s for the 1.5B); later ones find it in memory (~1 s), as repeated questions do.
  ``/proc/loadavg`` is read before and after every answer: numbers taken on a busy machine
  say so.
* ``--legacy`` runs the same loop against an older ``oya`` on ``PYTHONPATH`` (the "before" of
  the speed work: the only APIs used are ``LlamaAnswerer(path, time_limit=)``,
  ``retrieval_options``, ``answer_stream`` and ``_stream``).
* Verdicts are written by hand into ``bench/results/llm_survey_verdicts.json`` after reading the
  answers against the expected ones. What the reader was shown is judged, whoever wrote it: when
  the guard replaced the model's reply by the extractive answer (a fallback, counted apart), that
  answer is judged against the expected one like any other (older runs marked it "fallback",
  unjudged); ``--report`` joins them with the measurements into
  ``bench/results/llm_survey.md``.

Run: ``python -m bench.llm_survey --tree oya=/tmp/oya --tree click=/tmp/click-8.1.8
--tree gin=/tmp/gin --model m1.gguf --model m2.gguf [--only oya-fence,...]``, then
``python -m bench.llm_survey --report``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
QUESTIONS = BENCH_DIR / "llm_survey_questions.json"
RESULTS = BENCH_DIR / "results" / "llm_survey.json"
VERDICTS = BENCH_DIR / "results" / "llm_survey_verdicts.json"
REPORT = BENCH_DIR / "results" / "llm_survey.md"
ASK_K = 8  # `oya ask`'s default
SURVEY_LIMIT = 300.0
# what the reader was shown: the model's answer judged against the expected one, or the
# extractive answer because the guard rejected the model's (not a model answer, not judged)
VERDICTS_ALLOWED = ("correct", "partly", "wrong", "fallback")  # "fallback": unjudged (older runs)
LOW_LOAD = 2.0


def loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), round(p / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def index_tree(name: str, tree: Path, work: Path) -> Path:
    from pipelines.build import run_build

    out = work / "index" / name
    if not (out / "index.duckdb").is_file():
        run_build(tree, out)
    return out


def teeing_answerer(model: Path, legacy: bool, work: Path) -> Any:
    """A ``LlamaAnswerer`` whose ``_stream`` also records the raw pieces with their times."""
    from oya.query.llm import LlamaAnswerer

    class Teeing(LlamaAnswerer):  # type: ignore[misc, valid-type]
        raw: list[str]
        raw_stamps: list[float]

        def _stream(self, messages: list[dict[str, str]], deadline: float) -> Iterator[str]:
            self.raw, self.raw_stamps = [], []
            for piece in super()._stream(messages, deadline):
                self.raw.append(piece)
                self.raw_stamps.append(time.perf_counter())
                yield piece

    # one generous limit for every model: the survey measures how long answers take
    if legacy:
        return Teeing(model, time_limit=SURVEY_LIMIT)
    return Teeing(model, time_limit=SURVEY_LIMIT, runtime_dir=work / "runtime")


def reload(answerer: Any) -> float:
    """Seconds to load the answerer's model afresh (the old one freed first)."""
    old, answerer._llm = answerer._llm, None
    close = getattr(old, "close", None)
    if close is not None:
        close()
    del old
    t0 = time.perf_counter()
    answerer.load()
    return time.perf_counter() - t0


def proposed_validity(raw: str, result: Any) -> tuple[int, int]:
    """(valid, proposed) citations in the raw reply, or (0, 0) when it does not parse."""
    from oya.core.answer import validate_citations
    from oya.query.llm import parse_reply

    try:
        _, proposed = parse_reply(raw)
    except Exception:
        return 0, 0
    kept, rejected = validate_citations(proposed, result)
    return len(proposed) - rejected, len(proposed)


def ask(searcher: Any, answerer: Any, question: str) -> dict[str, Any]:
    load_before = loadavg()
    t0 = time.perf_counter()
    result = searcher.search(question, options=answerer.retrieval_options(ASK_K))
    retrieval_s = time.perf_counter() - t0
    shown: list[float] = []
    started = time.perf_counter()
    # set by answer_stream and _stream once the model is asked: a question it is not asked
    # must not report the previous one's
    answerer.result, answerer.raw, answerer.raw_stamps = None, [], []
    answer = answerer.answer_stream(question, result, lambda _piece: shown.append(time.perf_counter()))
    done = time.perf_counter()
    raw = "".join(getattr(answerer, "raw", []))
    read = getattr(answerer, "result", None)  # the context the model read; None: not asked
    valid, proposed = proposed_validity(raw, read if read is not None else result)
    stamps = getattr(answerer, "raw_stamps", [])
    snippets = read.context.snippets if read is not None else ()
    return {
        "question": question,
        "answer": answer.text,
        "method": answer.method,
        "note": answer.note,
        "raw": raw,
        "citations": [f"{c.path}:{c.start_line}-{c.end_line}" for c in answer.citations],
        "proposed_citations": proposed,
        "valid_citations": valid,
        "confidence": result.confidence.level,
        "snippets": len(snippets),
        "context": [f"{s.citation.label}{' (cut)' if s.truncated else ''}" for s in snippets],
        "context_tokens": read.context.tokens if read is not None else 0,
        "retrieval_s": round(retrieval_s, 3),
        "first_token_s": round(stamps[0] - started, 2) if stamps else None,
        "first_word_shown_s": round(shown[0] - started, 2) if shown else None,
        "answer_s": round(done - started, 2),
        "reply_pieces": len(stamps),
        "grammar_full_scans": getattr(getattr(answerer._llm, "last_shortlist", None), "full_scans", None)
        if stamps
        else None,
        "load_before": load_before,
        "load_after": loadavg(),
    }


def run(args: argparse.Namespace) -> int:
    from oya.query.searcher import Searcher

    data = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    questions = data["questions"]
    if args.only:
        wanted = set(args.only.split(","))
        questions = [q for q in questions if q["id"] in wanted or q["repo"] in wanted]
    trees = dict(t.split("=", 1) for t in args.tree)
    work = Path(args.work)
    indexes = {name: index_tree(name, Path(path), work) for name, path in trees.items()}
    searchers = {name: Searcher.open(path) for name, path in indexes.items()}
    for s in searchers.values():
        s.search("warm up the embedder and the index")

    out = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.is_file() else {"runs": {}}
    for model in map(Path, args.model):
        label = args.label or model.name + (" (before)" if args.legacy else "")
        t0 = time.perf_counter()
        answerer = teeing_answerer(model, args.legacy, work)
        answerer.load()
        load_s = time.perf_counter() - t0
        llm = getattr(answerer, "_llm", None)
        fresh = not args.legacy and not args.one_load
        # a run split into stages (--only) keeps the answers of the other stages
        rows = [
            r
            for r in out["runs"].get(label, {}).get("answers", [])
            if r["id"] not in {q["id"] for q in questions}
        ]
        out["runs"][label] = {
            "model": model.name,
            "threads": getattr(llm, "n_threads", None),
            "model_bytes": model.stat().st_size,
            "legacy": args.legacy,
            "load_s": round(load_s, 2),
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "answers": rows,
        }
        for i, q in enumerate(questions):
            if fresh and i:  # a new `oya ask` process: the model loaded again, its KV cache empty
                load_s = reload(answerer)
            row = ask(searchers[q["repo"]], answerer, q["question"])
            row.update(
                id=q["id"],
                repo=q["repo"],
                load_s=round(load_s, 2),
                end_to_end_s=round(row["retrieval_s"] + row["answer_s"] + load_s, 2),
            )
            rows.append(row)
            print(
                f"[{label}] {q['id']}: {row['method']} first word {row['first_word_shown_s']} s, "
                f"answer {row['answer_s']} s, citations {row['valid_citations']}/{row['proposed_citations']}, "
                f"load {row['load_before']:.1f}->{row['load_after']:.1f} {row['note'][:70]}",
                flush=True,
            )
            # written after every answer: a run stopped half way keeps what it measured
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            RESULTS.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        del answerer
    print(f"wrote {RESULTS}")
    return 0


def summarize(run: dict[str, Any], verdicts: dict[str, Any]) -> dict[str, Any]:
    rows = run["answers"]
    model_rows = [r for r in rows if r["method"] == "llama"]
    e2e = [r["end_to_end_s"] for r in rows]
    firsts = [r["first_word_shown_s"] for r in rows if r["first_word_shown_s"] is not None]
    judged = {k: v for k, v in verdicts.items() if any(r["id"] == k for r in rows)}
    counts = {v: sum(1 for j in judged.values() if j["verdict"] == v) for v in VERDICTS_ALLOWED}
    # the fallbacks' own verdicts: the extractive answer shown, judged like any other
    fell = [judged[r["id"]]["verdict"] for r in rows if r["method"] != "llama" and r["id"] in judged]
    fallback_verdicts = ", ".join(f"{fell.count(v)} {v}" for v in VERDICTS_ALLOWED[:3] if fell.count(v))
    proposed = sum(r["proposed_citations"] for r in rows)
    loads = [r["load_before"] for r in rows] + [r["load_after"] for r in rows]
    # the time bounds hold at low load: the answers begun and ended below LOW_LOAD
    calm = [r["end_to_end_s"] for r in rows if max(r["load_before"], r["load_after"]) < LOW_LOAD]
    calm_text = (
        f"{statistics.median(calm):.1f} / {percentile(calm, 95):.1f} ({len(calm)})" if calm else "none"
    )
    return {
        "questions": len(rows),
        "model_answers": len(model_rows),
        "fallbacks": len(rows) - len(model_rows),
        "fallback_verdicts": fallback_verdicts,
        "first_word_p50": round(statistics.median(firsts), 1) if firsts else None,
        "answer_p50": round(statistics.median(r["answer_s"] for r in rows), 1),
        "e2e_p50": round(statistics.median(e2e), 1),
        "e2e_p95": round(percentile(e2e, 95), 1),
        "citations_valid": f"{sum(r['valid_citations'] for r in rows)}/{proposed}",
        "shown_citations_valid": "all" if all(r["citations"] for r in rows) else "?",
        "judged": len(judged),
        **counts,
        "calm": calm_text,
        "load_min": round(min(loads), 1),
        "load_median": round(statistics.median(loads), 1),
        "load_max": round(max(loads), 1),
    }


def shared_subset_lines(runs: dict[str, Any], verdicts: dict[str, Any]) -> list[str]:
    """For a run that answered only some questions: every run's verdicts on those same questions."""
    most = max(len(r["answers"]) for r in runs.values())
    lines: list[str] = []
    for label, run in runs.items():
        ids = {r["id"] for r in run["answers"]}
        if len(ids) == most:
            continue
        lines += ["", f"On the {len(ids)} questions `{label}` answered:"]
        for other, other_run in runs.items():
            judged = verdicts.get(other, {})
            if not ids <= {r["id"] for r in other_run["answers"]}:
                continue
            counts = {
                v: sum(1 for i in ids if judged.get(i, {}).get("verdict") == v) for v in VERDICTS_ALLOWED
            }
            lines.append(f"- {other}: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    return lines


def report() -> int:
    runs = json.loads(RESULTS.read_text(encoding="utf-8"))["runs"]
    verdicts = json.loads(VERDICTS.read_text(encoding="utf-8")) if VERDICTS.is_file() else {}
    lines = [
        "# Local model survey for `oya ask --llm` (issue 27)",
        "",
        f"Generated by `python -m bench.llm_survey --report` from `{RESULTS.name}` (the answers, times and",
        f"loads) and `{VERDICTS.name}` (a verdict and its reason for each answer, written by hand after",
        "reading it against the question's expected answer in `bench/llm_survey_questions.json`).",
        "Times in seconds on this machine (2 cores); end to end = retrieval + answer + model load.",
        "**correct** = right and answers the question; **partly** = right in part, or misses the mechanism",
        "asked about, or has a wrong detail; **wrong** = the main claim is false. A **fallback** is an",
        "answer where the guard rejected the model's reply and showed the extractive answer with the reason;",
        "it is judged like any other answer (counted in correct/partly/wrong, its verdicts also beside the",
        'fallbacks), except in the first three runs, which left a fallback unjudged (verdict "fallback").',
        "",
        "| model | MB | threads | load s | first word p50 | answer p50 | end to end p50 | p95 | model answers "
        "| fallbacks | proposed citations valid | correct | partly | wrong | load avg (min/median/max) "
        "| end to end p50 / p95 at load < 2 (answers) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, run in runs.items():
        s = summarize(run, verdicts.get(label, {}))
        fallbacks = (
            f"{s['fallbacks']} ({s['fallback_verdicts']})" if s["fallback_verdicts"] else s["fallbacks"]
        )
        lines.append(
            f"| {label} | {run['model_bytes'] / 1e6:.0f} | {run.get('threads')} | {run['load_s']} | "
            f"{s['first_word_p50']} | {s['answer_p50']} | {s['e2e_p50']} | {s['e2e_p95']} | "
            f"{s['model_answers']}/{s['questions']} | {fallbacks} | {s['citations_valid']} | "
            f"{s['correct']} | {s['partly']} | {s['wrong']} | {s['load_min']}/{s['load_median']}/{s['load_max']} | {s['calm']} |"
        )
    lines += shared_subset_lines(runs, verdicts)
    for label, run in runs.items():
        judged = verdicts.get(label, {})
        lines += [
            "",
            f"## {label}",
            "",
            "| question | shown | first word s | end to end s | context tokens | verdict | reason |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in run["answers"]:
            v = judged.get(r["id"], {})
            lines.append(
                f"| {r['id']} | {r['method']} | {r['first_word_shown_s']} | {r['end_to_end_s']} | "
                f"{r['context_tokens']} | {v.get('verdict', '?')} | {v.get('reason', r['note'])} |"
            )
    REPORT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH of a source tree")
    ap.add_argument("--model", action="append", default=[], help="a GGUF file (repeatable)")
    ap.add_argument("--work", default=str(BENCH_DIR / ".cache" / "llm_survey"))
    ap.add_argument("--only", default="", help="question ids or repository names, comma-separated")
    ap.add_argument("--label", default="", help="the run's name in the results (default: the file name)")
    ap.add_argument("--legacy", action="store_true", help="an older oya on PYTHONPATH (the 'before')")
    ap.add_argument("--one-load", action="store_true", help="load each model once, not per question")
    ap.add_argument("--report", action="store_true", help="write llm_survey.md from the results")
    args = ap.parse_args(argv)
    return report() if args.report else run(args)


if __name__ == "__main__":
    raise SystemExit(main())
