"""Every language parsed through tags queries: its grammar wheel, its query file and its module system.

Theory of operation. The graph links files through *module keys*: ``/``-separated names without
dots (a dot in a path part becomes ``_``), one per file, chosen so that what an import statement
writes can be matched against them:

==========  =================================================  ==========================================
language    a file's key                                       what an import names
==========  =================================================  ==========================================
JS / TS     path without extension, ``/index`` dropped         relative path (``./x``, ``../y/index.js``);
                                                               a bare package is external (``npm:...``)
Go          the package directory (the package name at root)   the import path; its tail matches the key
Java        ``package/Stem`` (``com/acme/Store``)              the class (``com.acme.Store``)
Kotlin      the package (a file may hold many classes)         the class (``com.acme.Store``)
C#          the namespace                                      the namespace of ``using``
Rust        path without extension, ``mod``/``lib``/``main``   the ``use`` path (``crate``/``self``/``super``
            dropped                                            resolved), ``mod x;`` a child module
C / C++     the path, ``.`` as ``_`` (``src/util_h``)           the ``#include`` path
Ruby        path without extension                             ``require_relative`` from the file's folder,
                                                               ``require`` from any load path
PHP         ``Namespace/Stem``                                 the ``use``d class
==========  =================================================  ==========================================

Keys need not be complete: the graph builder matches an import by the longest key that ends
with it (``fmt/core_h`` finds ``include/fmt/core_h``) or that it ends with (a Go import path
ends with the package directory), nearest to the importing file on ties.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module, resources
from pathlib import PurePosixPath

from oya.graph.parsing.tags import TagsParser

# (binding, target): the local name an import binds (None when it binds none) and its module key
Imports = list[tuple[str | None, str]]


def key_of(parts: list[str] | tuple[str, ...]) -> str:
    return "/".join(p.replace(".", "_") for p in parts if p and p != ".")


def _stem_parts(path: str, drop: tuple[str, ...] = ()) -> list[str]:
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if len(parts) > 1 and parts[-1] in drop:
        parts.pop()
    return parts


def _relative(path: str, spec: str) -> list[str] | None:
    """``spec`` joined to the folder of ``path``; None when it climbs out of the repository."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    return None if joined.startswith("..") else joined.split("/")


def _unquote(spec: str) -> str:
    return spec.strip().strip("\"'`<>")


# -- module keys --------------------------------------------------------------------------------


def _path_key(drop: tuple[str, ...] = ()) -> Callable[[str, str], str]:
    return lambda path, package: key_of(_stem_parts(path, drop))


def _package_key(path: str, package: str) -> str:
    """``package/Stem`` (Java, Kotlin, PHP); the path when the file declares no package."""
    stem = PurePosixPath(path).stem
    return key_of([*package.split("."), stem]) if package else key_of(_stem_parts(path))


def _namespace_key(path: str, package: str) -> str:
    return key_of(package.split(".")) if package else key_of(_stem_parts(path))


def _go_key(path: str, package: str) -> str:
    folder = posixpath.dirname(path)
    return key_of(folder.split("/")) if folder else (package or PurePosixPath(path).stem)


def _c_key(path: str, package: str) -> str:
    return key_of(path.split("/"))


# -- imports ------------------------------------------------------------------------------------

_JS_EXTS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")


def _js_imports(path: str, key: str, spec: str, relative: bool) -> Imports:
    spec = _unquote(spec)
    if spec.startswith("."):
        parts = _relative(path, spec)
        if parts is None:
            return []
        if parts[-1].endswith(_JS_EXTS):
            parts[-1] = parts[-1].rsplit(".", 1)[0]
        if len(parts) > 1 and parts[-1] == "index":
            parts.pop()
        return [(None, key_of(parts))]
    if spec.startswith(("@/", "~/")):  # the usual alias of the source root
        return [(None, key_of(spec[2:].split("/")))]
    return [(None, "npm:" + spec)] if spec else []


_GO_VERSION = re.compile(r"^v\d+$")


def _go_imports(path: str, key: str, spec: str, relative: bool) -> Imports:
    parts = [p for p in _unquote(spec).split("/") if p]
    if not parts:
        return []
    name = parts[-2] if len(parts) > 1 and _GO_VERSION.match(parts[-1]) else parts[-1]
    return [(re.sub(r"[.-].*$", "", name.removeprefix("go-")), key_of(parts))]


def _dotted_imports(path: str, key: str, spec: str, relative: bool) -> Imports:
    """Java, Kotlin, C#, PHP: ``a.b.C`` (``A\\B\\C``) binds ``C``."""
    parts = [p for p in re.split(r"[.\\]", spec.strip().strip("\\;")) if p and p != "*"]
    return [(parts[-1], key_of(parts))] if parts else []


def _namespace_imports(path: str, key: str, spec: str, relative: bool) -> Imports:
    """C# ``using A.B;`` opens a namespace: it binds no name."""
    parts = [p for p in spec.strip().split(".") if p]
    return [(None, key_of(parts))] if parts else []


def _rust_paths(spec: str) -> list[str]:
    """``a::{b, c::{d, e as f}}`` -> ``a::b``, ``a::c::d``, ``a::c::e@f`` (``@`` marks an alias)."""
    spec = "".join(re.sub(r"\s+as\s+", "@", spec).split())
    open_at = spec.find("{")
    if open_at < 0:
        return [spec] if spec else []
    prefix, inner = spec[:open_at], spec[open_at + 1 : spec.rfind("}")]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(inner + ","):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    return [path for item in items if item for path in _rust_paths(prefix + item)]


def _rust_segments(written: str, key: str) -> list[str]:
    """The ``use`` path with ``crate``/``self``/``super`` made absolute (as module keys are)."""
    segments = [s for s in written.split("::") if s and s != "*"]
    base = key.split("/")
    if segments and segments[0] == "crate":
        return segments[1:]
    if segments and segments[0] == "self":
        return [*base, *segments[1:]]
    ups = 0
    while ups < len(segments) and segments[ups] == "super":
        ups += 1
    if ups:
        return [*base[: max(0, len(base) - ups)], *segments[ups:]]
    return segments


def _rust_imports(path: str, key: str, spec: str, relative: bool) -> Imports:
    if relative:  # `mod child;`
        return [(spec.strip(), f"{key}/{spec.strip()}")]
    found: Imports = []
    for item in _rust_paths(spec):
        written, _, alias = item.partition("@")
        segments = _rust_segments(written, key)
        if not segments or segments[-1] == "self":
            continue
        found.append((alias or segments[-1], key_of(segments)))
    return found


def _c_imports(path: str, key: str, spec: str, relative: bool) -> Imports:
    written = _unquote(spec)
    if not written:
        return []
    parts = _relative(path, written) if written.startswith("..") else written.split("/")
    return [(None, key_of(parts))] if parts else []


def _ruby_imports(path: str, key: str, spec: str, relative: bool) -> Imports:
    written = _unquote(spec).removesuffix(".rb")
    parts = _relative(path, written) if relative else written.split("/")
    return [(None, key_of(parts))] if parts else []


# -- the registry ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LanguageSpec:
    name: str
    wheel: str  # the grammar's module (a PyPI wheel that bundles the compiled grammar)
    function: str  # its function returning the grammar
    queries: tuple[str, ...]  # its query files in oya/graph/parsing/queries, run as one query
    module_key: Callable[[str, str], str]  # (path, declared package) -> module key
    imports: Callable[[str, str, str, bool], Imports]  # (path, key, spec, relative) -> bindings
    fallback: str = ""  # the language to try when this grammar cannot read a file (C headers in C++)
    fallback_hint: str = ""  # a regex: a file it finds goes straight to the fallback

    def parser(self) -> TagsParser:
        grammar = getattr(import_module(self.wheel), self.function)()
        folder = resources.files("oya.graph.parsing").joinpath("queries")
        text = "\n".join(folder.joinpath(name).read_text(encoding="utf-8") for name in self.queries)
        return TagsParser(self, grammar, text)


_JS_KEY = _path_key(("index",))
_JS = ("ecma.scm", "javascript.scm")
_TS = ("ecma.scm", "typescript.scm")
_RUST_KEY = _path_key(("mod", "lib", "main"))
# C++ in a C header: what C cannot say (`namespace x`, `template <`, `public:`, `a::b`)
_CPP_HINT = r"\bnamespace\s+\w|\btemplate\s*<|^\s*(?:public|private|protected)\s*:|\w::\w"
SPECS = (
    LanguageSpec("javascript", "tree_sitter_javascript", "language", _JS, _JS_KEY, _js_imports),
    LanguageSpec("typescript", "tree_sitter_typescript", "language_typescript", _TS, _JS_KEY, _js_imports),
    LanguageSpec("tsx", "tree_sitter_typescript", "language_tsx", _TS, _JS_KEY, _js_imports),
    LanguageSpec("go", "tree_sitter_go", "language", ("go.scm",), _go_key, _go_imports),
    LanguageSpec("java", "tree_sitter_java", "language", ("java.scm",), _package_key, _dotted_imports),
    LanguageSpec(
        "csharp", "tree_sitter_c_sharp", "language", ("csharp.scm",), _namespace_key, _namespace_imports
    ),
    LanguageSpec(
        "kotlin", "tree_sitter_kotlin", "language", ("kotlin.scm",), _namespace_key, _dotted_imports
    ),
    LanguageSpec("rust", "tree_sitter_rust", "language", ("rust.scm",), _RUST_KEY, _rust_imports),
    LanguageSpec("c", "tree_sitter_c", "language", ("c.scm",), _c_key, _c_imports, "cpp", _CPP_HINT),
    LanguageSpec("cpp", "tree_sitter_cpp", "language", ("c.scm", "cpp.scm"), _c_key, _c_imports),
    LanguageSpec("ruby", "tree_sitter_ruby", "language", ("ruby.scm",), _path_key(), _ruby_imports),
    LanguageSpec("php", "tree_sitter_php", "language_php", ("php.scm",), _package_key, _dotted_imports),
)
