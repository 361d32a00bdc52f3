"""Where a file comes from: written here, or generated, vendored, amalgamated or copied (issue 24).

A bug report's words are in the file a maintainer edits, and also in every copy of it: a
single-header amalgamation (``single_include/x.hpp``), generated code (``*.pb.go``, a file whose
header says "DO NOT EDIT"), a vendored library, a duplicate. The copies then take the first
places. So the reader tells each file's origin, the index keeps it, and the ranking puts copies
after the source (``oya.core.kinds``); they stay searchable, and each one's wiki page says why.

Theory of operation (first rule that applies decides; one pass over the texts, linear):

1. ``.gitattributes``: ``linguist-generated`` and ``linguist-vendored`` as GitHub's linguist
   reads them (set, ``=true``; ``-attr`` or ``=false`` says a file is source whatever the other
   rules find). Patterns match as git's do, relative to the attributes file's folder; a deeper
   file and a later line win.
2. Names: generated-code conventions (``*.pb.go``, ``*_pb2.py``, ``*.generated.cs``...),
   vendored folders (``vendor/``, ``third_party/``...) and amalgamation folders
   (``single_include/``, ``singleheader/``, ``amalgamation/``).
3. A generated-file header in the first ``HEADER_LINES`` lines ("Code generated ... DO NOT EDIT",
   ``@generated``, "automatically generated ... do not edit", protocol buffers, Thrift).
4. Copies, from the text: each file's distinctive lines (``MIN_LINE_CHARS`` or more, seen in at
   most ``MAX_SHARED`` files, so licence headers and boilerplate do not count) are looked up
   in the others. A file that holds most of the lines of ``MIN_PARTS`` or more other files,
   which make up at least half of it, is an amalgamation of them; of two files that each hold
   most of the other's lines, one is a copy (the vendored-looking one, else the one outside
   source folders, else the deeper path): exactly one of two identical files ranks as source.
   Files that merely look alike (sibling printers, config classes) hold each other only in
   part, and are left alone.
5. TypeScript declarations (``x.d.ts``) beside the JavaScript they describe (``x.js``) mirror it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence

import pathspec

from oya.core.kinds import file_kind
from oya.models import Provenance, SourceFile

HEADER_LINES = 25
MIN_LINE_CHARS = 24  # shorter lines ("}", "return x;", "#include <string>") are shared by chance
MAX_SHARED = 4  # a line in more files than this is boilerplate (a licence header), not evidence
MIN_DISTINCT = 20  # a file with fewer distinctive lines is too small to call a copy
COPY_SHARE = 0.8  # of a file's distinctive lines found in one other file: a copy of it
AMALGAM_SHARE = 0.5  # of a file's distinctive lines found in other files ...
MIN_PARTS = 2  # ... each of at least this many contributing at least PART_LINES: an amalgamation
PART_LINES = 10


# --- 1. .gitattributes --------------------------------------------------------------------

_ATTRS = {"linguist-generated": "generated", "linguist-vendored": "vendored"}


@functools.lru_cache(maxsize=4096)
def _file_regex(pattern: str) -> re.Pattern[str] | None:
    """A gitattributes pattern as an expression over file paths (no folder matches: in an
    attributes file ``dir/`` matches nothing and ``dir/**`` everything inside)."""
    compiled = pathspec.GitIgnoreSpec.from_lines([pattern]).patterns
    if not compiled or compiled[0].regex is None or compiled[0].include is not True:
        return None
    regex = compiled[0].regex
    if "ps_d" in regex.groupindex:  # "name" or "a/*.h": the file itself, not a folder of it
        return re.compile(f"(?:{regex.pattern})\\Z", regex.flags)
    return regex  # "dir/**", "*": a prefix, or anything


def _attribute_lines(text: str) -> Iterable[tuple[str, str, bool]]:
    """(pattern, attribute, set?) for the linguist attributes each line names."""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("[attr]"):
            continue
        pattern, *attrs = line.split()
        for attr in attrs:
            name, _, value = attr.lstrip("-!").partition("=")
            if name not in _ATTRS:
                continue
            unset = attr.startswith(("-", "!")) or value.lower() in ("false", "0")
            yield pattern, name, not unset


def attribute_origins(attributes: Mapping[str, str], paths: Iterable[str]) -> dict[str, Provenance | None]:
    """Per path the verdict of the ``.gitattributes`` files (folder -> text, "" for the root):
    a Provenance, None where an attribute says the file is source, absent where none speaks."""
    rules: list[tuple[str, re.Pattern[str], str, bool]] = []  # shallow folders first: deeper win
    for folder in sorted(attributes, key=lambda f: (f.count("/") + bool(f), f)):
        for pattern, name, is_set in _attribute_lines(attributes[folder]):
            regex = _file_regex(pattern)
            if regex is not None:
                rules.append((folder, regex, name, is_set))
    out: dict[str, Provenance | None] = {}
    if not rules:
        return out
    for path in paths:
        verdict: dict[str, bool] = {}
        for folder, regex, name, is_set in rules:
            prefix = folder + "/" if folder else ""
            if path.startswith(prefix) and regex.search(path[len(prefix) :]):
                verdict[name] = is_set
        if any(verdict.values()):
            name = next(n for n in _ATTRS if verdict.get(n))
            out[path] = Provenance(_ATTRS[name], f".gitattributes marks it {name}")
        elif verdict:
            out[path] = None
    return out


# --- 2. names -----------------------------------------------------------------------------

_GENERATED_NAME = re.compile(
    r"(\.pb\.(go|cc|h|c|swift|dart|ts|js)|_pb2(_grpc)?\.pyi?|_grpc_pb\.(js|d\.ts)|_pb\.(js|d\.ts)|"
    r"\.pb\.gw\.go|_grpc\.pb\.go|\.(generated|designer|g|freezed|gen)\.\w+|_generated\.\w+|"
    r"^zz_generated\..*\.go)$",
    re.IGNORECASE,
)
_VENDOR_DIRS = frozenset(
    "vendor vendors vendored third_party third-party thirdparty 3rdparty bower_components".split()
)
# C and C++ ship single-file builds of their headers and sources in these folders (nlohmann's,
# simdjson's, SQLite's); the scripts that make them live there too and are not copies
_AMALGAM_DIRS = frozenset("single_include singleheader single_header amalgamation amalgamated".split())
_C_FAMILY = re.compile(r"\.(c|h|cc|cpp|cxx|c\+\+|hpp|hh|hxx|h\+\+|ipp|inl|tpp)$", re.IGNORECASE)
_NOT_SOURCE = ("test", "doc", "changelog", "template")


def name_origin(path: str) -> Provenance | None:
    """The origin a path's folders or name give it, if any."""
    parts = path.split("/")
    for folder in parts[:-1]:
        low = folder.lower()
        if low in _AMALGAM_DIRS and _C_FAMILY.search(parts[-1]):
            return Provenance("amalgamated", f"in {folder}/, where single-file builds of the source go")
        if low in _VENDOR_DIRS:
            return Provenance("vendored", f"in {folder}/, where copies of other projects go")
    if _GENERATED_NAME.search(parts[-1]):
        return Provenance("generated", "its name is a code generator's")
    return None


# --- 3. headers ---------------------------------------------------------------------------

_HEADER = re.compile(
    r"@generated\b|\bcode generated\b[^\n]{0,160}\bdo not edit\b|generated by the protocol buffer compiler|"
    r"\bautogenerated by thrift\b|"
    r"\b(auto-?generated|automatically generated|generated (automatically|by|from|with))\b[^\n]{0,160}"
    r"\b(do not|don't|must not) (edit|modify)\b|"
    r"\b(do not|don't) (edit|modify)\b[^\n]{0,160}\b(auto-?generated|generated)\b|"
    r"\bthis (file|code) (is|was|has been) (auto-?generated|automatically generated|generated)\b",
    re.IGNORECASE,
)


def header_origin(text: str) -> Provenance | None:
    """``generated`` when the file's first lines say so."""
    head = "\n".join(text[:4000].split("\n", HEADER_LINES)[:HEADER_LINES])
    m = _HEADER.search(head)
    if m is None:
        return None
    said = " ".join(m.group(0).split())[:60]
    return Provenance("generated", f'its header says "{said}"')


# --- 4. copies ----------------------------------------------------------------------------


def _distinct_lines(text: str) -> set[bytes]:
    out = set()
    for line in text.split("\n"):
        s = " ".join(line.split())
        if len(s) >= MIN_LINE_CHARS:
            out.add(hashlib.blake2b(s.encode(), digest_size=8).digest())
    return out


def _vendored_looking(path: str) -> bool:
    return any(p.lower() in _VENDOR_DIRS or p.lower() in _AMALGAM_DIRS for p in path.split("/")[:-1])


def copy_origins(files: Sequence[SourceFile]) -> dict[str, Provenance]:
    """Amalgamations and copies among ``files``, from their distinctive lines."""
    lines = {f.path: _distinct_lines(f.text) for f in sorted(files, key=lambda f: f.path)}
    holders: dict[bytes, list[str]] = {}
    for path, hashes in lines.items():
        for h in hashes:
            have = holders.setdefault(h, [])
            if len(have) <= MAX_SHARED:  # past it the line is boilerplate: stop counting
                have.append(path)
    distinct: dict[str, int] = {}
    shared: dict[str, dict[str, int]] = {}  # path -> other path -> distinctive lines they share
    for path, hashes in lines.items():
        mine = [holders[h] for h in hashes if len(holders[h]) <= MAX_SHARED]
        distinct[path] = len(mine)
        counts: dict[str, int] = {}
        for have in mine:
            for other in have:
                if other != path:
                    counts[other] = counts.get(other, 0) + 1
        shared[path] = counts

    def holds(a: str, b: str) -> bool:  # most of b's distinctive lines are in a
        return distinct[b] >= MIN_DISTINCT and shared[a].get(b, 0) >= COPY_SHARE * distinct[b]

    out: dict[str, Provenance] = {}
    for path, counts in shared.items():
        if distinct[path] < MIN_DISTINCT:
            continue
        parts = [o for o in counts if holds(path, o) and not holds(o, path)]
        if len(parts) >= MIN_PARTS and sum(counts[o] for o in parts) >= AMALGAM_SHARE * distinct[path]:
            out[path] = Provenance("amalgamated", f"it holds {len(parts)} other files' lines")
    for path, counts in shared.items():
        if path in out or distinct[path] < MIN_DISTINCT:
            continue
        for other in sorted(counts, key=lambda o: (-counts[o], o)):
            # a near-identical pair: one of the two is the copy (a file inside a bigger one is
            # not: the bigger one is an amalgamation, or the two share a part)
            if other not in out and holds(other, path) and holds(path, other):
                # only a copy outside the source folders counts: two near-identical source files
                # are duplicated code a maintainer edits twice, and neither is the copy
                if _copy_rank(path) > _copy_rank(other) and _copy_rank(path)[:2] > _copy_rank(other)[:2]:
                    out[path] = Provenance("copy", f"a copy of {other}")
                break
    return out


def _copy_rank(path: str) -> tuple[int, int, int, str]:
    """Which of two identical files is the copy: the vendored-looking one, else a test's, a doc's
    or an example's, else the deeper path, else the later one."""
    return (int(_vendored_looking(path)), int(file_kind(path) in _NOT_SOURCE), path.count("/"), path)


# --- 5. declarations ----------------------------------------------------------------------

_DECLARATION = re.compile(r"\.d\.(ts|mts|cts)$")


def declaration_origins(paths: Iterable[str]) -> dict[str, Provenance]:
    """``x.d.ts`` files whose JavaScript (``x.js``, ``x.mjs``, ``x.cjs``) is indexed beside them."""
    have = set(paths)
    out = {}
    for path in have:
        m = _DECLARATION.search(path)
        if m is None:
            continue
        stem = path[: m.start()]
        for ext in (".js", ".mjs", ".cjs"):
            if stem + ext in have:
                out[path] = Provenance(
                    "declaration", f"the type declarations of {stem.rsplit('/', 1)[-1]}{ext}"
                )
                break
    return out


# --- all of it ----------------------------------------------------------------------------


def file_origins(files: Sequence[SourceFile], attributes: Mapping[str, str]) -> dict[str, Provenance]:
    """The files of a scan that are not source a maintainer edits, each with its origin."""
    paths = [f.path for f in files]
    by_attr = attribute_origins(attributes, paths)
    out: dict[str, Provenance] = {}
    undecided = []
    for f in files:
        if f.path in by_attr:
            verdict = by_attr[f.path]
            if verdict is not None:
                out[f.path] = verdict
            continue
        found = name_origin(f.path) or header_origin(f.text)
        if found is not None:
            out[f.path] = found
        else:
            undecided.append(f)
    for path, p in {**declaration_origins(f.path for f in undecided), **copy_origins(undecided)}.items():
        out.setdefault(path, p)
    return dict(sorted(out.items()))
