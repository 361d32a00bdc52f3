"""Where Oya keeps what it makes once per machine and reuses across indexes.

One frozen record, resolved from ``--cache-dir`` (``oya build``), the ``cache_dir`` field of the
Dagster resource, or ``$OYA_CACHE_DIR``, else ``~/.cache/oya``. A build resolves it once and passes
it down to every use: the embedding cache, the exported query model (the embedder and the site)
and the browser runtime's npm packages. Commands without ``--cache-dir`` (``oya search``/``ask``:
the query model, the LLM models) use the default; ``default_cache_dir`` is its only definition.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def default_cache_dir() -> Path:
    """``$OYA_CACHE_DIR`` if set, else ``~/.cache/oya``."""
    env = os.environ.get("OYA_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "oya"


@dataclass(frozen=True, slots=True)
class CachePaths:
    root: Path

    @classmethod
    def resolve(cls, cache_dir: str | Path | None = None) -> CachePaths:
        """``cache_dir`` when given (not empty), else the default."""
        return cls(Path(cache_dir).expanduser() if cache_dir else default_cache_dir())

    def embeddings(self, model_id: str) -> Path:
        """The SQLite file of ``model_id``'s vectors, shared by every index."""
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model_id)
        return self.root / "embeddings" / f"{safe}.sqlite"

    @property
    def llm_models(self) -> Path:
        """GGUF files assembled by ``make llm``."""
        return self.root / "models" / "llm"


__all__ = ["CachePaths", "default_cache_dir"]
