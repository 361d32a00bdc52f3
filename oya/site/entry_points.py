"""Where a reader starts: console scripts, ``__main__`` modules and command-line modules.

Found from the index alone, in this order of confidence: console scripts declared in a
``pyproject.toml`` (``[project.scripts]``, ``[tool.poetry.scripts]``) or a ``setup.py``/
``setup.cfg`` ``console_scripts`` list; ``bin``/``main`` of a root ``package.json``;
``__main__.py`` files; modules with an ``if __name__ == "__main__":`` block; and modules that
look like command-line front ends (named ``cli``/``main``/``manage`` or importing argparse,
click or typer). Each is reported once, with the reason it was picked.
"""

from __future__ import annotations

import json
import posixpath
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from oya.core.records import Node
from oya.core.results import page_url

MAX_ENTRY_POINTS = 15
_MAIN_GUARD = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.MULTILINE)
_CLI_IMPORT = re.compile(r"^\s*(?:import|from)\s+(argparse|click|typer)\b", re.MULTILINE)
_CONSOLE_SCRIPT = re.compile(r"['\"]?([\w.-]+)\s*=\s*([\w.]+):([\w.]+)")
_CLI_NAMES = {"cli.py", "main.py", "manage.py", "__main__.py"}


class _File(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def language(self) -> str: ...


class SiteData(Protocol):
    """What entry points are found from: ``oya.site.pages.SiteData`` is one (named here, not
    imported, so that pages, which lists the entry points, and this module form no cycle)."""

    @property
    def files(self) -> Sequence[_File]: ...

    @property
    def by_path(self) -> Mapping[str, object]: ...

    @property
    def symbols(self) -> Mapping[str, Sequence[Node]]: ...

    def text(self, path: str) -> str: ...

    def line_url(self, path: str, line: int) -> str: ...


@dataclass(frozen=True)
class EntryPoint:
    label: str
    url: str
    reason: str


def _module_file(data: SiteData, dotted: str) -> str | None:
    rel = dotted.replace(".", "/")
    for cand in (rel + ".py", rel + "/__init__.py", rel + "/__main__.py"):
        for f in data.files:
            if f.path == cand or f.path.endswith("/" + cand):
                return f.path
    return None


def _script_target(data: SiteData, target: str) -> str | None:
    module, _, func = target.partition(":")
    path = _module_file(data, module)
    if path is None:
        return None
    for n in data.symbols.get(path, []):
        if n.qualname == func:
            return data.line_url(path, n.start_line)
    return page_url(path)


def _console_scripts(data: SiteData) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for f in data.files:
        name = posixpath.basename(f.path)
        if name == "pyproject.toml":
            try:
                doc = tomllib.loads(data.text(f.path))
            except tomllib.TOMLDecodeError:
                continue
            tables = [
                doc.get("project", {}).get("scripts", {}),
                doc.get("tool", {}).get("poetry", {}).get("scripts", {}),
            ]
            for table in tables:
                if isinstance(table, dict):
                    found += [(str(k), str(v)) for k, v in sorted(table.items()) if isinstance(v, str)]
        elif name in ("setup.py", "setup.cfg"):
            text = data.text(f.path)
            if "console_scripts" in text:
                tail = text[text.index("console_scripts") :][:2000]
                found += [(m.group(1), f"{m.group(2)}:{m.group(3)}") for m in _CONSOLE_SCRIPT.finditer(tail)]
    return found


def _package_json(data: SiteData) -> list[EntryPoint]:
    if "package.json" not in data.by_path:
        return []
    try:
        doc = json.loads(data.text("package.json"))
    except ValueError:
        return []
    if not isinstance(doc, dict):
        return []
    out = []
    targets: list[tuple[str, object]] = [("main", doc.get("main"))]
    bins = doc.get("bin")
    if isinstance(bins, str):
        targets.append(("bin", bins))
    elif isinstance(bins, dict):
        targets += [(f"bin {k}", v) for k, v in sorted(bins.items())]
    for label, target in targets:
        if isinstance(target, str):
            path = posixpath.normpath(target)
            if path in data.by_path:
                out.append(EntryPoint(f"{label}: {path}", page_url(path), "declared in package.json"))
    return out


def find_entry_points(data: SiteData) -> list[EntryPoint]:
    out: list[EntryPoint] = []
    seen: set[str] = set()

    def add(ep: EntryPoint) -> None:
        key = ep.url.split("#")[0]
        if key not in seen and len(out) < MAX_ENTRY_POINTS:
            seen.add(key)
            out.append(ep)

    for script, target in _console_scripts(data):
        url = _script_target(data, target)
        if url is not None:
            add(EntryPoint(f"{script} → {target}", url, "console script"))
    for ep in _package_json(data):
        add(ep)
    python = [f for f in data.files if f.language == "python"]
    for f in python:
        if posixpath.basename(f.path) == "__main__.py":
            add(EntryPoint(f.path, page_url(f.path), "runs with python -m"))
    guarded = []
    cli_like = []
    for f in python:
        text = data.text(f.path)
        if _MAIN_GUARD.search(text):
            guarded.append(f)
        elif posixpath.basename(f.path) in _CLI_NAMES or _CLI_IMPORT.search(text):
            cli_like.append(f)
    for f in guarded:
        add(EntryPoint(f.path, page_url(f.path), 'has an if __name__ == "__main__" block'))
    for f in cli_like:
        add(EntryPoint(f.path, page_url(f.path), "command-line module"))
    return out
