"""Is an index whole? Counts of what breaks its invariants, for the blocking check that stands
between a built index and the site published from it.

An index is consistent when every chunk has exactly one vector of the index's dimension, no
vector belongs to a missing chunk, and both ends of every edge are nodes. An empty index is
consistent: a repository with nothing to index (no files, only binaries) builds one, and its
site says so. (Counting emptiness as a problem made such repositories unbuildable once this
check became blocking.) A
``CodeGraph`` drops dangling edges when it loads, so readers would not notice one: that is why
this looks at the tables, not at the loaded graph.
"""

from dataclasses import asdict, dataclass

from oya.store.index import Index


@dataclass(frozen=True, slots=True)
class IndexHealth:
    chunks: int
    nodes: int
    chunks_without_vector: int
    vectors_without_chunk: int
    vectors_of_wrong_size: int
    edges_with_missing_endpoint: int

    @property
    def problems(self) -> dict[str, int]:
        """Each broken invariant with its count; empty when the index is consistent."""
        return {k: v for k, v in asdict(self).items() if k not in ("chunks", "nodes") and v}


def _count(index: Index, sql: str, *params: object) -> int:
    return int(index.con.execute(sql, list(params)).fetchone()[0])  # type: ignore[index]


def index_health(index: Index) -> IndexHealth:
    return IndexHealth(
        chunks=_count(index, "SELECT count(*) FROM chunks"),
        nodes=_count(index, "SELECT count(*) FROM nodes"),
        chunks_without_vector=_count(
            index,
            "SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)",
        ),
        vectors_without_chunk=_count(
            index,
            "SELECT count(*) FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = e.chunk_id)",
        ),
        vectors_of_wrong_size=_count(
            index, "SELECT count(*) FROM embeddings WHERE octet_length(vec) <> ?", 4 * index.dim
        ),
        edges_with_missing_endpoint=_count(
            index,
            "SELECT count(*) FROM edges g WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = g.source) "
            "OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = g.target)",
        ),
    )
