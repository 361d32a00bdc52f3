"""Ways of writing an index's rows into DuckDB, timed against the shipped ``oya.store.writer._bulk_insert``.

    PYTHONPATH=$PWD .venv/bin/python -m bench.experiments.insert_variants bench/.cache/full_build/networkx/out

Reads every table of an existing index and writes it into a fresh DuckDB file three ways,
alternating, 2 rounds: ``ndjson`` (shipped: one ``json.dumps`` a row, ``read_json``), ``json_array``
(one ``json.dumps`` for the whole table, ``read_json(format='array')``) and ``numpy_objects`` (one
NumPy object array a column, scanned by DuckDB in place). Both variants lost (docs/DECISIONS.md,
"One-file rebuild: what was measured"); this keeps them runnable.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from oya.store.writer import _SCHEMA, _bulk_insert

TABLES = ["meta", "files", "skipped", "chunks", "nodes", "edges", "embeddings", "parsed_files"]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]]:
    sql = "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position"
    return [(str(n), str(t)) for n, t in con.execute(sql, [table]).fetchall()]


def json_array(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[Any, ...]], work: Path) -> None:
    cols = _columns(con, table)
    blob = [t == "BLOB" for _, t in cols]
    names = [f"c{i}" for i in range(len(cols))]
    objs = [
        dict(
            zip(
                names,
                [
                    base64.b64encode(v).decode() if b and v is not None else v
                    for v, b in zip(row, blob, strict=True)
                ],
                strict=True,
            )
        )
        for row in rows
    ]
    if not objs:
        return
    fd, name = tempfile.mkstemp(suffix=".json", dir=work)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(objs, ensure_ascii=False))
    spec = ", ".join(
        f"{c}: '{'VARCHAR' if b else t}'" for c, (_, t), b in zip(names, cols, blob, strict=True)
    )
    exprs = ", ".join(f"from_base64({c})" if b else c for c, b in zip(names, blob, strict=True))
    con.execute(
        f"INSERT INTO {table} SELECT {exprs} FROM read_json(?, columns={{{spec}}}, format='array', "
        "maximum_object_size=1073741824)",
        [name],
    )
    os.unlink(name)


def numpy_objects(
    con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[Any, ...]], work: Path
) -> None:
    if not rows:
        return
    columns = {
        f"c{i}": np.fromiter(col, dtype=object, count=len(rows))
        for i, col in enumerate(zip(*rows, strict=True))
    }
    con.execute(f"INSERT INTO {table} SELECT {', '.join(columns)} FROM columns")  # a replacement scan


def shipped(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[Any, ...]], work: Path) -> None:
    _bulk_insert(con, table, rows, work)


def run(fn: Callable[..., None], data: dict[str, list[tuple[Any, ...]]]) -> dict[str, float]:
    work = Path(tempfile.mkdtemp())
    con = duckdb.connect(str(work / "x.duckdb"))
    con.execute(_SCHEMA)
    per = {}
    for table in TABLES:
        t0 = time.perf_counter()
        fn(con, table, data[table], work)
        per[table] = round(time.perf_counter() - t0, 2)
    con.close()
    return per


def main() -> None:
    src = duckdb.connect(str(Path(sys.argv[1]) / "index.duckdb"), read_only=True)
    data = {t: src.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES}
    src.close()
    for _ in range(2):
        for fn in (shipped, json_array, numpy_objects):
            per = run(fn, data)
            print(f"{fn.__name__:14} {sum(per.values()):6.2f} s  {per}  load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
