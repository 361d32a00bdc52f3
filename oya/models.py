"""Records used by the CPython adapters (reader, parsers, graph builder).

The retrieval records (Node, Edge, Chunk) live in ``oya.core.records`` so the browser
shares them; these ones never leave the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from oya.core.records import Node

# Every reason a file can be skipped for. Reports count skips by these strings.
SKIP_REASONS = (
    "ignored",  # matched .gitignore or a built-in ignore rule (.git, node_modules, ...)
    "binary",  # NUL bytes or a known binary extension
    "too-large",  # over the size limit
    "secret",  # secret-looking name (.env, *.pem, id_rsa) or mostly secrets by content
    "not-utf8",  # cannot be decoded as UTF-8
    "empty",  # zero bytes or only whitespace
    "symlink",  # a symlink (never followed: loops and escapes are impossible)
    "too-deep",  # nested deeper than the depth limit
    "too-long-path",  # a path too long to become a wiki page (oya.scanning.reader.MAX_PATH_BYTES)
    "unreadable",  # an OS error while reading
    "unsupported",  # a language Oya does not index
    "generated-docs",  # HTML a documentation generator wrote (javadoc, Doxygen): never indexed file by file
)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A text file accepted for indexing. ``path`` is repository-relative POSIX."""

    path: str
    language: str
    size: int
    sha256: str
    n_lines: int
    text: str  # secret values already replaced by markers (oya.scanning.redact)
    redactions: tuple[tuple[str, int], ...] = ()  # (rule, values replaced), by rule name


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.reason not in SKIP_REASONS:
            raise ValueError(f"skip reason must be one of {', '.join(SKIP_REASONS)}; got {self.reason!r}")


# where a file comes from when it is not source a maintainer edits (oya.scanning.provenance)
ORIGINS = ("generated", "vendored", "amalgamated", "copy", "declaration", "tooling")


@dataclass(frozen=True, slots=True)
class Provenance:
    """A file that is not the source a maintainer edits: one of ``ORIGINS``, and why."""

    origin: str
    reason: str

    def __post_init__(self) -> None:
        if self.origin not in ORIGINS:
            raise ValueError(f"origin must be one of {', '.join(ORIGINS)}; got {self.origin!r}")


@dataclass(frozen=True, slots=True)
class ScanResult:
    files: tuple[SourceFile, ...]
    skipped: tuple[SkippedFile, ...]
    # path -> origin, for the files that are not source (generated, vendored, copies)
    origins: dict[str, Provenance] = field(default_factory=dict)

    def redaction_counts(self) -> dict[str, int]:
        """Secret values replaced across all files, by rule."""
        counts: dict[str, int] = {}
        for f in self.files:
            for rule, n in f.redactions:
                counts[rule] = counts.get(rule, 0) + n
        return dict(sorted(counts.items()))

    def skip_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.skipped:
            counts[s.reason] = counts.get(s.reason, 0) + 1
        return dict(sorted(counts.items()))


@dataclass(frozen=True, slots=True)
class Reference:
    """An unresolved use of a name inside a symbol, as written in the source.

    kind is ``calls``, ``inherits`` or ``imports``; ``target`` is the dotted text
    (``self.store.save``, ``os.path.join``, ``Base``); for imports it is the
    absolute dotted module or module.attr that the import statement names.
    """

    source: str
    kind: str
    target: str
    line: int


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """What a language parser extracts from one file."""

    path: str
    module: str  # dotted module name ("oya.core.bm25"); "" when it has none
    symbols: tuple[Node, ...]  # module node first
    references: tuple[Reference, ...]
    # local name -> absolute dotted target for every import binding in the module
    imports: dict[str, str] = field(default_factory=dict)
    errors: tuple[str, ...] = ()  # syntax errors the parser recovered from
