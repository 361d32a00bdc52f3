"""Measure `oya ask --llm` with the local Qwen model: load, prompt and generation speed, memory.

Theory of operation:

* The corpus is a real project's source distribution (``bench/corpus.py``; click by default),
  indexed once with ``pipelines.build.run_build`` (the Dagster job behind ``oya build``) into
  ``bench/.cache/llm/``. Its documentation stays in: this is what a user would index.
* The model is the GGUF ``make llm-qwen`` assembled and verified (or ``--model PATH``). Loading
  is timed through ``LlamaAnswerer.load`` with the same settings ``oya ask --llm`` uses.
* Each question of ``bench/llm_questions.json`` is retrieved with the options ``oya ask --llm``
  uses (the model's smaller context budget) and
  answered by ``LlamaAnswerer.answer_stream``, the code path of ``oya ask --llm``. A thin proxy
  around the loaded model timestamps every streamed piece, so time to first token (which is
  almost all prompt evaluation) and generation time are split without touching the answerer.
  Token counts come from the model's own tokenizer: the prompt is the chat-templated messages,
  the completion is the streamed text.
* Peak memory is the process's ``ru_maxrss`` (index + embedder + model, as in ``oya ask``),
  also taken before the model is loaded so the model's share shows.
* ``--threads`` compares generation threads on the first question (llama-cpp-python's default
  is half the CPUs, which assumes hyper-threading).

Answers, with their citations and timings, go to ``bench/results/llm_bench.json``; the judged
sample in ``bench/results/llm_judged.md`` was written by reading those answers against the code.

Run: ``make llm-qwen && .venv/bin/python -m bench.llm_bench [--project click==8.1.8]
[--threads 1,2] [--limit N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.common import BENCH_DIR, CACHE_DIR, RESULTS, ROOT, machine, write_json
from bench.corpus import fetch_project, parse_spec
from oya.query.llm import LlamaAnswerer, build_messages, find_model
from oya.query.searcher import Searcher

QUESTIONS = BENCH_DIR / "llm_questions.json"
RESULT = RESULTS / "llm_bench.json"
ASK_K = 8  # `oya ask`'s default


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


class TimedModel:
    """Wraps a loaded ``llama_cpp.Llama``; records when each streamed piece arrives."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.started = 0.0
        self.stamps: list[float] = []
        self.text: list[str] = []

    def create_chat_completion(self, **kwargs: Any) -> Iterator[Any]:
        self.started, self.stamps, self.text = time.perf_counter(), [], []
        for chunk in self.llm.create_chat_completion(**kwargs):
            piece = chunk["choices"][0].get("delta", {}).get("content")
            if piece:
                self.stamps.append(time.perf_counter())
                self.text.append(piece)
            yield chunk


def prompt_tokens(llm: Any, messages: list[dict[str, str]]) -> int:
    """Tokens of the chat-templated prompt, as the model's own chat handler formats it."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    meta = llm.metadata
    formatter = Jinja2ChatFormatter(
        template=meta["tokenizer.chat_template"],
        eos_token=llm.detokenize([llm.token_eos()]).decode("utf-8", "replace"),
        bos_token=llm.detokenize([llm.token_bos()]).decode("utf-8", "replace"),
    )
    text = formatter(messages=messages).prompt
    return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def index_project(spec: str) -> Path:
    from pipelines.build import run_build

    name, version = parse_spec(spec)
    tree = fetch_project(spec)
    out = CACHE_DIR / "llm" / f"{name}-{version}"
    if not (out / "index.duckdb").is_file():
        run_build(tree, out)
    return out


def ask(searcher: Searcher, answerer: LlamaAnswerer, timed: TimedModel, question: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    result = searcher.search(question, options=answerer.retrieval_options(ASK_K))
    retrieval_s = time.perf_counter() - t0
    messages = build_messages(question, result)
    answer = answerer.answer_stream(question, result, None)
    done = time.perf_counter()
    stamps = timed.stamps
    completion = "".join(timed.text)
    n_prompt = prompt_tokens(timed.llm, messages)
    n_out = len(timed.llm.tokenize(completion.encode("utf-8"), add_bos=False)) if completion else 0
    ttft = (stamps[0] - timed.started) if stamps else float("nan")
    gen_s = (stamps[-1] - stamps[0]) if len(stamps) > 1 else float("nan")
    return {
        "question": question,
        "answer": answer.text,
        "method": answer.method,
        "note": answer.note,
        "citations": [f"{c.path}:{c.start_line}-{c.end_line}" for c in answer.citations],
        "confidence": result.confidence.level,
        "retrieval_s": round(retrieval_s, 3),
        "prompt_tokens": n_prompt,
        "completion_tokens": n_out,
        "ttft_s": round(ttft, 2),
        "answer_s": round(done - timed.started, 2),
        "prompt_tok_per_s": round(n_prompt / ttft, 1) if stamps else None,
        "gen_tok_per_s": round((n_out - 1) / gen_s, 1) if n_out > 1 and gen_s > 0 else None,
    }


def median(rows: list[dict[str, Any]], key: str) -> float:
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    return round(statistics.median(values), 2) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", default="click==8.1.8")
    ap.add_argument("--model", type=Path, default=None, help="a GGUF (default: the one `make llm-qwen` made)")
    ap.add_argument("--threads", default=f"1,{os.cpu_count() or 1}", help="generation threads to compare")
    ap.add_argument("--limit", type=int, default=0, help="answer only the first N questions")
    args = ap.parse_args(argv)

    model = args.model or find_model()
    if model is None or "qwen" not in model.name.lower() and args.model is None:
        print("no Qwen model in the cache: run `make llm-qwen` first", file=sys.stderr)
        return 1
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    if args.limit:
        questions = questions[: args.limit]
    threads = sorted({int(t) for t in args.threads.split(",") if t.strip()})

    index = index_project(args.project)
    searcher = Searcher.open(index)
    searcher.search("warm up the embedder and the index")
    rss_before_model = peak_rss_mb()

    runs: dict[int, dict[str, Any]] = {}
    for n in threads:
        t0 = time.perf_counter()
        loader = LlamaAnswerer(model, threads=n)
        llm = loader.load()
        load_s = time.perf_counter() - t0
        timed = TimedModel(llm)
        answerer = LlamaAnswerer(llm=timed, time_limit=300)
        asked = questions if n == max(threads) else questions[:1]
        rows = []
        for q in asked:
            row = ask(searcher, answerer, timed, q["question"])
            row["id"] = q["id"]
            rows.append(row)
            print(
                f"[{n} thr] {q['id']}: ttft {row['ttft_s']} s, answer {row['answer_s']} s, "
                f"{row['prompt_tokens']}+{row['completion_tokens']} tok, {row['method']}",
                flush=True,
            )
        runs[n] = {"load_s": round(load_s, 2), "answers": rows}
        del loader, llm, timed, answerer

    best = max(threads)
    rows = runs[best]["answers"]
    summary = {
        "model": model.name,
        "model_bytes": model.stat().st_size,
        "project": args.project,
        "threads": best,
        "load_s": runs[best]["load_s"],
        "prompt_tokens_median": median(rows, "prompt_tokens"),
        "completion_tokens_median": median(rows, "completion_tokens"),
        "prompt_tok_per_s_median": median(rows, "prompt_tok_per_s"),
        "gen_tok_per_s_median": median(rows, "gen_tok_per_s"),
        "ttft_s_median": median(rows, "ttft_s"),
        "answer_s_median": median(rows, "answer_s"),
        "answer_s_max": max(r["answer_s"] for r in rows),
        "model_answers": sum(r["method"] == "llama" for r in rows),
        "questions": len(rows),
        "peak_rss_mb_before_model": round(rss_before_model),
        "peak_rss_mb": round(peak_rss_mb()),
    }
    by_threads = {
        n: {
            "load_s": runs[n]["load_s"],
            "ttft_s": runs[n]["answers"][0]["ttft_s"],
            "answer_s": runs[n]["answers"][0]["answer_s"],
            "gen_tok_per_s": runs[n]["answers"][0]["gen_tok_per_s"],
        }
        for n in threads
    }
    facts = machine()
    out = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": facts,
        "summary": summary,
        "threads": by_threads,
        "answers": rows,
    }
    write_json(RESULT, out)

    print(f"\n{summary['model']} on {args.project}, {facts['cpu']}, {facts['cpus']} CPUs, {best} threads")
    print("| measure | value |\n|---|---|")
    for key, value in summary.items():
        if key not in ("model", "project", "threads"):
            print(f"| {key} | {value} |")
    print(
        "\n| generation threads | load s | TTFT s | full answer s | generation tok/s |\n|---|---|---|---|---|"
    )
    for n, r in by_threads.items():
        print(f"| {n} | {r['load_s']} | {r['ttft_s']} | {r['answer_s']} | {r['gen_tok_per_s']} |")
    print(f"\nwrote {RESULT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
