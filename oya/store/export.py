"""What the site's bundle export reads from the index, as SQL kept with the store.

The bundle (``oya.site.bundle``) carries the index's BM25 postings, nodes and edges. Reading them
from the index's own tables, instead of re-tokenising chunks and rebuilding the graph in Python,
keeps a one-file rebuild's site step short; the queries live here so all SQL stays in the store.
"""

from __future__ import annotations

from typing import Any

from oya.store.index import Index

# The index's BM25 tables hold exactly these postings (``oya.store.writer`` counts the same stored tokens),
# so they are read from there as numpy columns instead of splitting and counting every chunk's
# tokens again in Python. ``pos`` is the chunk's place in ``all_chunks`` order.
CHUNK_ORDER = """
SELECT row_number() OVER (ORDER BY c.path, c.start_line, c.id) - 1 AS pos, d.docid, d.len
FROM chunks c JOIN fts_main_chunks.docs d ON d.name = c.id
"""
POSTINGS_SQL = f"""
SELECT b.termid, o.pos, b.tf FROM bm25_postings b JOIN ({CHUNK_ORDER}) o USING (docid) ORDER BY b.termid, o.pos
"""


def bm25_doc_lens(index: Index) -> list[int]:
    """Each chunk's BM25 document length, in ``all_chunks`` order."""
    return [int(n) for (n,) in index.con.execute(f"SELECT len FROM ({CHUNK_ORDER}) ORDER BY pos").fetchall()]


def bm25_posting_columns(index: Index) -> dict[str, Any]:
    """``termid``, ``pos`` (the chunk's place in ``all_chunks`` order) and ``tf`` as numpy columns,
    ordered by term then chunk."""
    return dict(index.con.execute(POSTINGS_SQL).fetchnumpy())


def bm25_term_names(index: Index) -> dict[int, str]:
    """BM25 term id -> the term."""
    return {
        int(t): str(term)
        for t, term in index.con.execute("SELECT termid, term FROM fts_main_chunks.dict").fetchall()
    }


def graph_rows(index: Index) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The code graph's nodes (by id) and edges (by source, target, kind; both ends known) as
    plain rows, as ``Index.graph`` holds them: building its ``Node``/``Edge`` objects and
    adjacency only to read them back cost a third of a second."""
    nodes = index.con.execute(
        "SELECT id, kind, name, qualname, path, start_line, end_line, coalesce(signature, ''), "
        "coalesce(docstring, ''), centrality FROM nodes ORDER BY id"
    ).fetchall()
    edges = index.con.execute(
        "SELECT source, target, kind, confidence FROM edges "
        "WHERE source IN (SELECT id FROM nodes) AND target IN (SELECT id FROM nodes) "
        "ORDER BY source, target, kind, confidence"
    ).fetchall()
    return nodes, edges
