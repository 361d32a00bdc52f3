"""A local model on a CPU: the system prompt's KV cache kept on disk, and a time limit that
follows this machine's measured speed.

Theory of operation:

1. The system prompt is the same for every question (the fence's key is in the user message),
   so the model reads it once per model and machine. ``PrefixCache`` saves llama.cpp's KV cache
   of those tokens (``llama_state_seq_save_file``: the sequence's cells and its tokens, no
   logits) under the cache folder, keyed by the model file (name, size, mtime), the context
   size, the tokens and the runtime's version. A later process loads it and llama.cpp's own
   prefix match (``Llama.generate`` keeps the longest common token prefix) evaluates only
   the rest of the prompt. A missing, foreign or unreadable file means the prompt is read as
   usual; the cache is only ever a shortcut.
2. ``SpeedRecord`` keeps, per model file, how many tokens a second this machine read (prompt)
   and wrote (reply), measured on real answers (and on the system prompt's first reading);
   each new measurement moves the record halfway. ``time_limit`` is ``SLACK`` times what an
   answer should take at those speeds — the prompt's tokens read, ``TYPICAL_REPLY_TOKENS``
   written — and at least ``MIN_LIMIT`` seconds, so a slow machine (or a loaded one, once
   measured) waits longer and a fast one gives up sooner. With no measurement yet the caller
   keeps its fixed default.
3. The same record sizes the prompt: ``context_for_speed`` gives the retrieved context as many
   tokens as this machine reads in ``READ_SECONDS`` (converted from the model's tokens to the
   core's), between ``MIN_CONTEXT`` and the caller's ceiling, so the first-ranked snippets,
   those that carry the answer, are what a slow machine reads.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SLACK = 3.0
MIN_LIMIT = 20.0
MAX_LIMIT = 600.0
TYPICAL_REPLY_TOKENS = 200  # citations and a few sentences: the median reply was ~75-150 tokens
WRITE_READ_RATIO = 1 / 6  # tokens written per token read, until a reply is measured (bench: 9.6 vs 55)
_STATE_SUFFIX = ".kvstate"
READ_SECONDS = 7.0  # of an answer's ~13 s: the rest is the model's load (~1 s), the citations and the answer
# code without line numbers in Qwen2.5's tokenizer vs the core's estimate (0.96 on 95k core tokens
# of oya, click and gin), plus the snippets' header lines (oya.query.llm_context)
MODEL_TOKENS_PER_CORE_TOKEN = 1.0
MIN_CONTEXT = 300  # core tokens: two or three short snippets, however slow the machine


def model_key(path: Path) -> str:
    """Names one model file (a changed or replaced file gets a new key)."""
    st = path.stat()
    return f"{path.name}:{st.st_size}:{st.st_mtime_ns}"


@dataclass
class Speed:
    read_tps: float  # prompt tokens read per second
    write_tps: float  # reply tokens written per second

    def expected_seconds(self, prompt_tokens: int, reply_tokens: int = TYPICAL_REPLY_TOKENS) -> float:
        return prompt_tokens / self.read_tps + reply_tokens / self.write_tps


class SpeedRecord:
    """Tokens per second by model, in ``speed.json`` in the cache folder (written aside)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "speed.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> Speed | None:
        row = self._load().get(key)
        if not isinstance(row, dict):
            return None
        read, write = row.get("read_tps"), row.get("write_tps")
        if not all(isinstance(v, (int, float)) and v > 0 for v in (read, write)):
            return None
        return Speed(float(read), float(write))  # type: ignore[arg-type]

    def update(self, key: str, *, read_tps: float | None = None, write_tps: float | None = None) -> None:
        """Move the record for ``key`` halfway to the new measurements (the first one is taken)."""
        data = self._load()
        old = data.get(key) if isinstance(data.get(key), dict) else {}
        row = dict(old)
        for name, value in (("read_tps", read_tps), ("write_tps", write_tps)):
            if value is None or value <= 0:
                continue
            prev = old.get(name)
            row[name] = round((prev + value) / 2 if isinstance(prev, (int, float)) else value, 2)
        if "read_tps" in row and "write_tps" not in row:
            row["write_tps"] = round(row["read_tps"] * WRITE_READ_RATIO, 2)
        data[key] = row
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass  # a read-only cache: the fixed default limit applies


def time_limit(speed: Speed | None, prompt_tokens: int, default: float) -> float:
    """Seconds an answer may take on this machine: ``SLACK`` x the expected time, bounded."""
    if speed is None:
        return default
    return min(MAX_LIMIT, max(MIN_LIMIT, SLACK * speed.expected_seconds(prompt_tokens)))


def context_for_speed(speed: Speed | None, ceiling: int) -> int:
    """Core tokens of retrieved context for a prompt this machine reads in ``READ_SECONDS``."""
    if speed is None:
        return ceiling
    fits = int(speed.read_tps * READ_SECONDS / MODEL_TOKENS_PER_CORE_TOKEN)
    return max(min(MIN_CONTEXT, ceiling), min(ceiling, fits))


class PrefixCache:
    """The KV cache of a fixed prompt prefix, saved once and loaded by later processes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "kv"

    def file_for(self, key: str, n_ctx: int, tokens: Sequence[int]) -> Path:
        import llama_cpp

        h = hashlib.sha256()
        h.update(f"{key}\0{n_ctx}\0{llama_cpp.__version__}\0".encode())
        h.update(json.dumps(list(tokens)).encode())
        return self.folder / (h.hexdigest()[:32] + _STATE_SUFFIX)

    def restore(self, llm: Any, key: str, tokens: Sequence[int]) -> float | None:
        """Put the KV cache of ``tokens`` into a fresh ``llm``: loaded from disk if saved, else
        evaluated and saved. Returns the reading speed (tokens/s) when it had to evaluate."""
        import llama_cpp

        if llm.n_tokens:
            return None  # this process already holds a prompt: llama.cpp reuses its prefix
        path = self.file_for(key, llm.n_ctx(), tokens)
        n = len(tokens)
        if path.is_file():
            out = (llama_cpp.llama_token * n)()
            count = ctypes.c_size_t(0)
            loaded = llama_cpp.llama_state_seq_load_file(
                llm.ctx, str(path).encode(), 0, out, n, ctypes.byref(count)
            )
            if loaded and count.value == n and list(out) == list(tokens):
                llm.input_ids[:n] = tokens
                llm.n_tokens = n
                llm._requires_eval = True  # logits come from the next decode, not the file
                return None
            llm.reset()
            llm._ctx.kv_cache_clear()
        started = time.perf_counter()
        llm.eval(list(tokens))
        elapsed = time.perf_counter() - started
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            arr = (llama_cpp.llama_token * n)(*tokens)
            if llama_cpp.llama_state_seq_save_file(llm.ctx, str(tmp).encode(), 0, arr, n):
                tmp.replace(path)
        except OSError:
            pass
        return n / elapsed if elapsed > 0 else None
