"""A small in-memory repository for the engine and answer tests (standard library only).

A plain module with a unique name, not a conftest.py: under pytest's default "prepend" import
mode every conftest.py is the module ``conftest``, and a second one would shadow tests/conftest.py
for the suites that import from it.

The semantic channel gets deterministic vectors: each token hashed (crc32) into one of 64
buckets, counted, normalised — a fake embedder, never random numbers.
"""

from __future__ import annotations

import hashlib
import math
import operator
import zlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from oya.core.bm25 import K1, B, BM25Index
from oya.core.channels import GRAPH_PREFIX_MATCH, BM25Channel, GraphChannel, MemoryCorpus, VectorChannel
from oya.core.graph import CodeGraph
from oya.core.options import RetrievalOptions
from oya.core.pipeline import retrieve
from oya.core.records import Chunk, Edge, Node
from oya.core.results import RetrievalResult
from oya.core.text import indexed_text
from oya.core.tokenize import count_tokens, tokenize
from oya.core.vectors import VectorIndex

DIM = 64
# the kernel oya.core.vectors uses, so a normalised vector here is what the core's was
_sumprod: Callable[[Iterable[float], Iterable[float]], float] = getattr(
    math, "sumprod", lambda a, b: sum(map(operator.mul, a, b))
)


def bm25_index(docs: Iterable[tuple[str, Sequence[str]]], *, k1: float = K1, b: float = B) -> BM25Index:
    """The core's BM25 over ``(doc_id, tokens)`` pairs, built in memory: the index the bundle
    decodes from the postings the build computed in SQL (tests/adapters/test_store_parity.py holds
    the two equal); bench/ uses it to run the browser's retrieval in CPython."""
    doc_ids: list[str] = []
    doc_lens: list[int] = []
    postings: dict[str, list[tuple[int, int]]] = {}
    for doc_id, tokens in docs:
        idx = len(doc_ids)
        doc_ids.append(doc_id)
        doc_lens.append(len(tokens))
        counts: dict[str, int] = {}
        for tok in tokens:
            counts[tok] = counts.get(tok, 0) + 1
        for tok, tf in counts.items():
            postings.setdefault(tok, []).append((idx, tf))
    return BM25Index(doc_ids, doc_lens, postings, k1=k1, b=b)


def vector_index(rows: Iterable[tuple[str, Sequence[float]]]) -> VectorIndex:
    """A ``VectorIndex`` of ``(id, vector)`` rows (the product decodes one from a float32 blob)."""
    ids: list[str] = []
    data = array("f")
    dim = 0
    for row_id, vec in rows:
        dim = dim or len(vec)
        if len(vec) != dim:
            raise ValueError(f"row {row_id!r} has dimension {len(vec)}, expected {dim}")
        ids.append(row_id)
        data.extend(vec)
    return VectorIndex(ids, data, dim or 1)


def normalize(values: Sequence[float]) -> list[float]:
    """``values`` scaled to unit length (all zeros stay zeros), as the build's embedders return them."""
    norm = math.sqrt(_sumprod(values, values))
    if norm == 0.0:
        return [0.0 for _ in values]
    return [v / norm for v in values]


def embed(text: str) -> list[float]:
    v = [0.0] * DIM
    for tok in tokenize(text):
        v[zlib.crc32(tok.encode()) % DIM] += 1.0
    return normalize(v)


def make_chunk(
    path: str, title: str, start: int, text: str, node_id: str | None = None, kind: str = "code"
) -> Chunk:
    end = start + text.count("\n")
    cid = hashlib.sha256(f"{path}\0{start}\0{end}\0{text}".encode()).hexdigest()[:16]
    return Chunk(
        id=cid,
        path=path,
        kind=kind,
        title=title,
        start_line=start,
        end_line=end,
        text=text,
        content_hash=hashlib.sha256(text.encode()).hexdigest(),
        n_tokens=count_tokens(text),
        node_id=node_id,
    )


PARSE_QUANTITY = '''def parse_quantity(text: str) -> int:
    """Parse a quantity such as '3' or '3 units' into an int."""
    number = text.strip().split()[0]
    value = int(number)
    if value < 0:
        raise ValueError("quantity cannot be negative")
    return value'''

SOURCES: list[tuple[str, str, int, str, str | None, str]] = [
    (
        "inventory/utils.py",
        "parse_quantity",
        10,
        PARSE_QUANTITY,
        "inventory/utils.py::parse_quantity",
        "function",
    ),
    (
        "inventory/utils.py",
        "format_money",
        20,
        'def format_money(cents: int) -> str:\n    """Format cents as a money string like $1.50."""\n'
        '    return f"${cents / 100:.2f}"',
        "inventory/utils.py::format_money",
        "function",
    ),
    (
        "inventory/utils.py",
        "slugify",
        30,
        'def slugify(name: str) -> str:\n    """Lower-case name with dashes."""\n    return "-".join(name.lower().split())',
        "inventory/utils.py::slugify",
        "function",
    ),
    (
        "inventory/service.py",
        "InventoryService",
        5,
        'class InventoryService:\n    """Reserve and restock items held in a storage."""',
        "inventory/service.py::InventoryService",
        "class",
    ),
    (
        "inventory/service.py",
        "InventoryService.reserve",
        10,
        "    def reserve(self, sku: str, quantity: str) -> None:\n"
        '        """Reserve stock of an item; raise OutOfStockError when too few are left."""\n'
        "        item = self.storage.get_item(sku)\n"
        "        wanted = parse_quantity(quantity)\n"
        "        if item.stock < wanted:\n"
        "            raise OutOfStockError(sku)\n"
        "        item.stock -= wanted\n"
        "        self.storage.save(item)",
        "inventory/service.py::InventoryService.reserve",
        "method",
    ),
    (
        "inventory/service.py",
        "InventoryService.restock",
        20,
        '    def restock(self, sku: str, count: int) -> None:\n        """Add stock to an item."""\n'
        "        item = self.storage.get_item(sku)\n        item.stock += count\n        self.storage.save(item)",
        "inventory/service.py::InventoryService.restock",
        "method",
    ),
    (
        "inventory/storage.py",
        "MemoryStorage.get_item",
        12,
        '    def get_item(self, sku: str) -> Item:\n        """The item with this sku; KeyError when unknown."""\n'
        "        return self.items[sku]",
        "inventory/storage.py::MemoryStorage.get_item",
        "method",
    ),
    (
        "inventory/storage.py",
        "MemoryStorage.save",
        16,
        '    def save(self, item: Item) -> None:\n        """Store the item in memory under its sku."""\n'
        "        self.items[item.sku] = item",
        "inventory/storage.py::MemoryStorage.save",
        "method",
    ),
    (
        "inventory/storage.py",
        "Storage",
        1,
        'class Storage:\n    """Where items are kept: the storage interface."""',
        "inventory/storage.py::Storage",
        "class",
    ),
    # the same text as parse_quantity in another file: dedup keeps one of the two
    (
        "inventory/legacy.py",
        "parse_quantity",
        1,
        PARSE_QUANTITY,
        "inventory/legacy.py::parse_quantity",
        "function",
    ),
    (
        "tests/test_utils.py",
        "test_parse_quantity",
        3,
        'def test_parse_quantity():\n    assert parse_quantity("3 units") == 3\n    assert parse_quantity(" 7") == 7',
        "tests/test_utils.py::test_parse_quantity",
        "function",
    ),
    (
        ".github/workflows/ci.yml",
        "ci.yml",
        1,
        "name: ci\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest",
        None,
        "",
    ),
    (
        "docs/guide.md",
        "Guide > Quantities",
        1,
        "# Quantities\n\nA quantity is parsed from text by parse_quantity; negative quantities are rejected.",
        None,
        "",
    ),
]


@dataclass
class Inventory:
    chunks: list[Chunk]
    nodes: list[Node]
    edges: list[Edge]
    graph: CodeGraph
    corpus: MemoryCorpus
    bm25: BM25Channel
    vectors: VectorChannel
    graph_channel: GraphChannel

    def by_title(self, title: str, path: str | None = None) -> Chunk:
        return next(c for c in self.chunks if c.title == title and (path is None or c.path == path))

    @property
    def channels(self) -> list[BM25Channel | VectorChannel | GraphChannel]:
        return [self.bm25, self.vectors, self.graph_channel]


def build_inventory() -> Inventory:
    chunks: list[Chunk] = []
    nodes: list[Node] = []
    centrality = {"parse_quantity": 0.4, "InventoryService.reserve": 0.3, "MemoryStorage.get_item": 0.5}
    for path, title, start, text, node_id, kind in SOURCES:
        chunk = make_chunk(path, title, start, text, node_id, "code" if node_id else "doc")
        chunks.append(chunk)
        if node_id:
            name = title.rsplit(".", 1)[-1]
            signature = text.split("\n", 1)[0].strip().rstrip(":")
            doc = text.split('"""')[1] if '"""' in text else ""
            nodes.append(
                Node(
                    node_id,
                    kind,
                    name,
                    title,
                    path,
                    chunk.start_line,
                    chunk.end_line,
                    signature,
                    doc,
                    centrality.get(title, 0.1),
                )
            )
    for module in sorted({n.path for n in nodes}):
        nodes.append(
            Node(
                module,
                "module",
                module.rsplit("/", 1)[-1][:-3],
                module[:-3].replace("/", "."),
                module,
                1,
                40,
                centrality=0.05,
            )
        )
    e = [
        (
            "inventory/service.py::InventoryService.reserve",
            "inventory/storage.py::MemoryStorage.get_item",
            "calls",
            0.9,
        ),
        (
            "inventory/service.py::InventoryService.reserve",
            "inventory/utils.py::parse_quantity",
            "calls",
            1.0,
        ),
        (
            "inventory/service.py::InventoryService.reserve",
            "inventory/storage.py::MemoryStorage.save",
            "calls",
            0.6,
        ),
        (
            "inventory/service.py::InventoryService.restock",
            "inventory/storage.py::MemoryStorage.get_item",
            "calls",
            0.9,
        ),
        (
            "inventory/service.py::InventoryService.restock",
            "inventory/storage.py::MemoryStorage.save",
            "calls",
            0.3,
        ),
        ("tests/test_utils.py::test_parse_quantity", "inventory/utils.py::parse_quantity", "calls", 1.0),
        ("inventory/service.py", "inventory/service.py::InventoryService", "contains", 1.0),
        (
            "inventory/service.py::InventoryService",
            "inventory/service.py::InventoryService.reserve",
            "contains",
            1.0,
        ),
        ("inventory/utils.py", "inventory/utils.py::parse_quantity", "contains", 1.0),
        ("inventory/utils.py", "inventory/utils.py::format_money", "contains", 1.0),
        ("inventory/utils.py", "inventory/utils.py::slugify", "contains", 1.0),
        ("inventory/service.py", "inventory/utils.py", "imports", 1.0),
    ]
    edges = [Edge(*row) for row in e]
    graph = CodeGraph(nodes, edges)
    corpus = MemoryCorpus(chunks)
    bm25 = BM25Channel(bm25_index((c.id, tokenize(indexed_text(c))) for c in chunks))
    vectors = VectorChannel(vector_index((c.id, embed(indexed_text(c))) for c in chunks))
    return Inventory(
        chunks,
        nodes,
        edges,
        graph,
        corpus,
        bm25,
        vectors,
        GraphChannel(graph, corpus, prefix_match=GRAPH_PREFIX_MATCH),
    )


def ask(inv: Inventory, question: str, **opts: object) -> RetrievalResult:
    """``question`` through every channel of ``inv`` with the fake embedder."""
    return retrieve(
        question,
        channels=inv.channels,
        graph=inv.graph,
        corpus=inv.corpus,
        vector=embed(question),
        options=RetrievalOptions(**opts),  # type: ignore[arg-type]
    )
