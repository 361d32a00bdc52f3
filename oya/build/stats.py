"""What a build reports: one frozen record per asset, and the summary of a whole build.

Each asset of ``pipelines/assets.py`` fills its record; the same record is shown twice: as the
asset's Dagster metadata (one entry per field, under the field's name) and as a row of the CLI's
build table (``describe``). ``pipelines.build`` reads the records back from the materializations
by their fields, so no other code names a metadata key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Self

from oya.models import SkippedFile

# Field metadata: the value is a file system path (Dagster shows it as one).
PATH: Mapping[str, str] = {"kind": "path"}


class AssetStats:
    """The part every asset's record shares: its asset's name, its seconds, the two renderings."""

    asset: ClassVar[str]
    seconds: float

    def describe(self) -> str:
        raise NotImplementedError

    def fields(self) -> dict[str, Any]:
        """Field name -> value, in declaration order: the asset's metadata entries."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Self:
        """The record back from a materialization's metadata (Dagster wraps each value)."""
        return cls(**{f.name: _plain(metadata[f.name]) for f in fields(cls)})  # type: ignore[arg-type]


def _plain(value: Any) -> Any:
    return getattr(value, "value", value)


@dataclass(frozen=True, slots=True)
class SourceFilesStats(AssetStats):
    asset = "source_files"
    files: int
    lines: int
    skipped: int
    skipped_by_reason: dict[str, int]
    redactions: dict[str, int]  # secret values replaced, by rule
    languages: dict[str, int]
    leftovers_removed: int
    seconds: float

    def describe(self) -> str:
        return f"{self.files} files, {self.lines} lines, {self.skipped} skipped"


@dataclass(frozen=True, slots=True)
class CodeGraphStats(AssetStats):
    asset = "code_graph"
    symbols: int
    edges: int
    parse_errors: int
    parses_reused: int
    degraded_files: int  # files a parser could not handle, indexed as text
    stats: dict[str, Any]
    seconds: float

    def describe(self) -> str:
        text = f", {self.degraded_files} unparsable files read as text" if self.degraded_files else ""
        return (
            f"{self.symbols} symbols, {self.edges} edges, {self.parse_errors} syntax errors recovered{text}"
        )


@dataclass(frozen=True, slots=True)
class ChunksStats(AssetStats):
    asset = "chunks"
    chunks: int
    code_chunks: int
    doc_chunks: int
    tokens: int
    seconds: float

    def describe(self) -> str:
        return f"{self.chunks} chunks ({self.code_chunks} code, {self.doc_chunks} docs)"


@dataclass(frozen=True, slots=True)
class EmbeddingStats(AssetStats):
    asset = "chunk_embeddings"
    model: str
    embedded: int
    cached: int
    vectors: int
    # the model's one-off preparation inside ``seconds``: "export" (ONNX export and int8
    # quantisation, once per cache folder) and "load" (the session); empty when nothing was embedded
    model_seconds: dict[str, float]
    seconds: float

    def describe(self) -> str:
        return f"{self.embedded} embedded, {self.cached} cached ({self.model})"


@dataclass(frozen=True, slots=True)
class SearchIndexStats(AssetStats):
    asset = "search_index"
    path: str = field(metadata=PATH)
    bytes: int
    chunks: int
    # rows deleted/inserted per table when the previous index was patched; {"patched": 0} when written anew
    patched: dict[str, int]
    seconds: float

    def describe(self) -> str:
        return f"{self.bytes / 1e6:.1f} MB"


@dataclass(frozen=True, slots=True)
class WikiPagesStats(AssetStats):
    """The counts ``oya.site.render`` reports for the pages it rendered or reused."""

    asset = "wiki_pages"
    pages: int
    rendered: int
    reused: int
    file_pages: int
    part_pages: int
    dir_pages: int
    diagrams: int
    files: int
    lines: int
    symbols: int
    chunks: int
    nodes: int
    edges: int
    skipped: int
    seconds: float

    def describe(self) -> str:
        return f"{self.pages} pages"


@dataclass(frozen=True, slots=True)
class WikiSiteStats(AssetStats):
    asset = "wiki_site"
    path: str = field(metadata=PATH)
    pages: int
    bytes: dict[str, int]  # by part: pages, static, runtime, model, bundle, total
    # inside ``seconds``, by part: pages, npm_install, runtime_copy, core_wheel, model_export, bundle,
    # hash_and_compress (of which compress_runtime and compress_site); npm_install, model_export and
    # compress_runtime are the one-off preparations, paid in full once per cache folder
    steps: dict[str, float]
    seconds: float

    def describe(self) -> str:
        return f"{self.pages} pages, {self.bytes.get('total', 0) / 1e6:.1f} MB"


@dataclass(frozen=True, slots=True)
class PublishedSiteStats(AssetStats):
    asset = "published_site"
    site: str = field(metadata=PATH)
    url: str  # the object-storage version it was uploaded to, or ""
    uploaded: int
    copied: int  # files copied inside the object store from the version it replaced
    seconds: float

    def describe(self) -> str:
        return f"published to {self.site}" + (f" and {self.url}" if self.url else "")


@dataclass(frozen=True, slots=True)
class BuildStats:
    """Every asset's record, in lineage order; the site's three are None when no site was built."""

    source_files: SourceFilesStats
    code_graph: CodeGraphStats
    chunks: ChunksStats
    chunk_embeddings: EmbeddingStats
    search_index: SearchIndexStats
    wiki_pages: WikiPagesStats | None = None
    wiki_site: WikiSiteStats | None = None
    published_site: PublishedSiteStats | None = None

    def assets(self) -> list[AssetStats]:
        found = (getattr(self, f.name) for f in fields(self))
        return [s for s in found if s is not None]


# every asset's record, in lineage order (BuildStats has one field per record, named by its asset)
RECORDS: tuple[type[AssetStats], ...] = (
    SourceFilesStats,
    CodeGraphStats,
    ChunksStats,
    EmbeddingStats,
    SearchIndexStats,
    WikiPagesStats,
    WikiSiteStats,
    PublishedSiteStats,
)


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    passed: bool


@dataclass(frozen=True, slots=True)
class BuildSummary:
    repo: str
    index: str
    seconds: float
    stats: BuildStats
    checks: tuple[CheckResult, ...]
    skipped: tuple[SkippedFile, ...]
    site: str = ""

    def rows(self) -> list[tuple[str, str, float]]:
        """(asset, what it made, seconds) per asset: the CLI's build table."""
        return [(s.asset, s.describe(), float(s.seconds)) for s in self.stats.assets()]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (bench/ writes it): the rows and each asset's metadata as well."""
        return {
            "repo": self.repo,
            "index": self.index,
            "site": self.site,
            "seconds": self.seconds,
            "checks": [dataclasses.asdict(c) for c in self.checks],
            "skipped": [dataclasses.asdict(s) for s in self.skipped],
            "assets": [{"asset": a, "result": r, "seconds": s} for a, r, s in self.rows()],
            "metadata": {s.asset: s.fields() for s in self.stats.assets()},
        }
