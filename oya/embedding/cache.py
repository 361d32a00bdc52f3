"""The embedding cache: vectors by ``sha256(model_id + text)`` in one SQLite file per model,
shared by every index (``oya.settings.CachePaths.embeddings``). Besides the modules of
``oya.store``, the one module that runs SQL (the import contract names both).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path


class EmbeddingCache:
    """Vectors by ``sha256(model_id + text)`` in one SQLite file shared by every index."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.con = sqlite3.connect(str(path), timeout=60)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    @staticmethod
    def key(model_id: str, text: str) -> str:
        return hashlib.sha256(model_id.encode() + b"\0" + text.encode()).hexdigest()

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        keys = list(keys)
        out: dict[str, bytes] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" for _ in part)
            out.update(
                self.con.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", part).fetchall()
            )
        return out

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        with self.con:
            self.con.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", list(items))

    def close(self) -> None:
        self.con.close()
