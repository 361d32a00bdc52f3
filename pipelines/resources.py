"""Resources: where the repository and the output live, which embedder, and progress.

Bound in one place (``pipelines/definitions.py``). The embedder is a string checked
against ``oya.embedding.embedder.EMBEDDERS`` ("minilm" the real model, "hashing" the deterministic
stand-in for tests and demos).
"""

from collections.abc import Callable
from pathlib import Path

from dagster import AssetExecutionContext, ConfigurableResource

from oya.build.progress import ProgressLog
from oya.embedding.embedder import Embedder, make_embedder
from oya.settings import CachePaths


class OyaSettings(ConfigurableResource):  # type: ignore[type-arg]
    """What to index and where to put the index and the site."""

    repo_path: str = "."
    out_dir: str = ""  # default: <repo>/.oya
    embedder: str = "minilm"
    cache_dir: str = ""  # default: $OYA_CACHE_DIR or ~/.cache/oya
    max_file_bytes: int = 1_000_000
    site_dir: str = ""  # default: <out>/site
    site_runtime: bool = True  # ship Pyodide, the model, the core wheel and the bundle
    publish_url: str = ""  # also publish the site to object storage: "s3://bucket/prefix"
    publish_endpoint: str = ""  # an S3-compatible server's URL (default: AWS)

    @property
    def repo(self) -> Path:
        return Path(self.repo_path).expanduser().resolve()

    @property
    def out(self) -> Path:
        return Path(self.out_dir).expanduser().resolve() if self.out_dir else self.repo / ".oya"

    @property
    def site(self) -> Path:
        return Path(self.site_dir).expanduser().resolve() if self.site_dir else self.out / "site"

    @property
    def cache(self) -> CachePaths:
        """Resolved here once; every asset that uses the cache takes it from this record."""
        return CachePaths.resolve(self.cache_dir)

    def make_embedder(self) -> Embedder:
        return make_embedder(self.embedder, self.cache.root)


class Progress:
    """Receives progress from assets; the CLI binds one that draws bars, Dagster a silent one.

    ``reporter`` also writes a few lines per step into the run's log (so Dagster's UI shows
    "chunk_embeddings: 4,000/10,481 embedded, ETA 1m20s"), at most one per tenth or 5 seconds.
    """

    def __init__(self, callback: Callable[[str, int, int], None] | None = None) -> None:
        self.callback = callback

    def update(self, step: str, done: int, total: int) -> None:
        if self.callback is not None:
            self.callback(step, done, total)

    def reporter(self, context: AssetExecutionContext, step: str, unit: str) -> Callable[[int, int], None]:
        lines = ProgressLog(step, unit, context.log.info)

        def report(done: int, total: int) -> None:
            self.update(step, done, total)
            lines(done, total)

        return report
