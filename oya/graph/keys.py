"""Module keys: how files of every language but Python find each other (``oya.graph.parsing.languages``).

Theory of operation. Each parsed file of a tags-query language has a module key, a ``/``-path
without dots (``src/api/client``, ``com/acme/Store``, the Go package folder ``cmd/doc``). An
import names a key, sometimes followed by ``.``-joined names (``src/util.parse`` for
``import {parse} from './util'``). ``locate`` finds the file the import means:

1. the whole key, written exactly (``1.0``), or as the tail of a longer key (``fmt/core_h`` for
   ``include/fmt/core_h``), or a longer import ending with a key (the Go import path
   ``github.com/x/tool/cmd/doc`` ends with ``cmd/doc``);
2. else the same with the last parts dropped: the import names something inside a module
   (``use crate::store::Store``), ``0.9``;
3. several keys fitting equally well: the nearest to the importing file by path, ``0.5``.

``member`` then finds a symbol in a located module by qualified name; files sharing a key (a Go
package, a C# namespace) share their symbols. Bare specifiers (``npm:react``) never match.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache

from oya.core.records import Node
from oya.models import ParsedFile
from oya.scanning.languages import detect_language

PYTHON_SUFFIXES = (".py", ".pyi", ".pyw")
IMPORT_MODULE = 1.0
IMPORT_NAME = 0.9
AMBIGUOUS_IMPORT = 0.5
# languages whose names may call each other: a TypeScript file uses JavaScript, C++ uses C
_FAMILIES = {"typescript": "js", "tsx": "js", "javascript": "js", "c": "c", "cpp": "c"}


def is_python(path: str) -> bool:
    return path.endswith(PYTHON_SUFFIXES)


def family(path: str) -> str:
    language = detect_language(path) or ""
    return _FAMILIES.get(language, language)


# a sort key over a few hundred paths, asked ~50k times per build (networkx): memoised
@lru_cache(maxsize=1 << 16)
def shared_prefix(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        count += 1
    return count


class KeyIndex:
    """The module keys of the non-Python files and the symbols under each key."""

    def __init__(self, parsed: Sequence[ParsedFile], nodes: dict[str, Node]) -> None:
        self.ids: dict[str, str] = {}  # key -> its first file (by path)
        self.tails: dict[str, list[str]] = defaultdict(list)  # every proper tail of a key -> keys
        self.named: dict[tuple[str, str], str] = {}  # (key, qualname) -> node id
        key_of_path: dict[str, str] = {}
        for p in sorted(parsed, key=lambda p: p.path):
            if is_python(p.path) or not p.module:
                continue
            key_of_path[p.path] = p.module
            if p.module in self.ids:
                continue
            self.ids[p.module] = p.path
            parts = p.module.split("/")
            for i in range(1, len(parts)):
                self.tails["/".join(parts[i:])].append(p.module)
        for node in sorted(nodes.values(), key=lambda n: n.id):
            key = key_of_path.get(node.path)
            if key is not None and node.kind != "module":
                self.named.setdefault((key, node.qualname), node.id)

    def _keys(self, parts: list[str]) -> list[str]:
        prefix = "/".join(parts)
        if prefix in self.ids:
            return [prefix]
        if prefix in self.tails:
            return self.tails[prefix]
        for j in range(1, len(parts)):
            tail = "/".join(parts[j:])
            if tail in self.ids:
                return [tail]
        return []

    def locate(self, target: str, importer: str) -> tuple[str, list[str], float] | None:
        """(key, the names left after it, confidence) for an import target, or None."""
        if target.startswith("npm:"):
            return None
        head, *names = target.split(".")
        parts = [p for p in head.split("/") if p]
        for i in range(len(parts), 0, -1):
            keys = self._keys(parts[:i])
            if not keys:
                continue
            key = min(keys, key=lambda k: (-shared_prefix(importer, self.ids[k]), k))
            left = parts[i:] + names
            if len(keys) > 1:
                return key, left, AMBIGUOUS_IMPORT
            return key, left, IMPORT_MODULE if not left else IMPORT_NAME
        return None

    def member(self, key: str, names: Sequence[str]) -> str | None:
        """The symbol ``names`` (``Store.save``) in the files of ``key``; a key that ends with the
        class's own name (Java's ``com/acme/Store``) also finds ``save`` as ``Store.save``."""
        if not names:
            return None
        qualname = ".".join(names)
        found = self.named.get((key, qualname))
        if found is None:
            own = key.rpartition("/")[2]
            if own != names[0]:
                found = self.named.get((key, f"{own}.{qualname}"))
        return found
