"""Every public name of oya/core has a caller in the product: what ships is what runs.

Theory of operation (``ast`` over the sources; nothing is imported or run):

* Definitions: each module of oya/core binds names at its top level (functions, classes,
  assignments), and each class holds methods and properties. Public ones (no leading underscore,
  not dunder) are checked; private ones are followed (a public name reached only through a
  private helper is used when the helper is).
* The product is oya/ and pipelines/ outside oya/core (the CLI, the build, the site, Dagster),
  plus the Python the browser runs: the code strings that site_template/static/*.js and
  oya/site/*.mjs hand to ``pyodide.runPython``. tests/ and bench/ are not the product.
* A core definition is used when product code outside oya/core names it (imported from its module,
  or an attribute of that module), or when a core definition that is used names it, or a
  top-level statement of a core module that binds nothing. So a function called only by an unused
  function is unused too. Names are resolved through the core's own ``from oya.core.x import y``;
  a class's dunder methods run when the class is used.
* A method or property is used when used code reads an attribute of its name on anything: no
  types are inferred, so this half is generous (a name shared with another class's used method
  passes), while functions, classes and constants are resolved exactly.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "oya" / "core"
PRODUCT = (ROOT / "oya", ROOT / "pipelines")
BROWSER_SOURCES = (ROOT / "site_template" / "static", ROOT / "oya" / "site")

Key = tuple[str, str]  # (core module, top-level name)

_RUN_PYTHON = re.compile(r"""runPython\(\s*(`[^`]*`|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""")
_INTERPOLATION = re.compile(r"\$\{[^}]*\}")


@dataclass
class CoreModule:
    name: str
    defs: dict[str, ast.AST] = field(default_factory=dict)  # top-level binding -> its statement
    methods: dict[str, dict[str, ast.AST]] = field(default_factory=dict)  # class -> method -> def
    imported: dict[str, Key] = field(default_factory=dict)  # local name -> the core name it is
    modules: dict[str, str] = field(default_factory=dict)  # local name -> a core module
    roots: list[ast.AST] = field(default_factory=list)  # top-level statements that bind nothing


def _core_module_of(dotted: str | None) -> str | None:
    if dotted and dotted.startswith("oya.core.") and dotted.count(".") == 2:
        return dotted.split(".")[2]
    return None


def _read_imports(tree: ast.AST, imported: dict[str, Key], modules: dict[str, str]) -> None:
    """What the local names of ``tree`` that come from oya.core stand for."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = _core_module_of(node.module)
            for alias in node.names:
                local = alias.asname or alias.name
                if mod is not None:
                    imported[local] = (mod, alias.name)
                elif node.module == "oya.core":
                    modules[local] = alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                mod = _core_module_of(alias.name)
                if mod is not None and alias.asname:
                    modules[alias.asname] = mod


def parse_core(sources: dict[str, str]) -> dict[str, CoreModule]:
    """Each core module's definitions, imports and binding-free statements, from its source."""
    out: dict[str, CoreModule] = {}
    for name, source in sources.items():
        tree = ast.parse(source, filename=f"{name}.py")
        module = CoreModule(name)
        _read_imports(tree, module.imported, module.modules)
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                module.defs[stmt.name] = stmt
                if isinstance(stmt, ast.ClassDef):
                    module.methods[stmt.name] = {
                        m.name: m for m in stmt.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
                    }
            elif isinstance(stmt, ast.Assign | ast.AnnAssign) and _targets(stmt):
                for target in _targets(stmt):
                    module.defs[target] = stmt
            elif not isinstance(stmt, ast.Import | ast.ImportFrom):
                module.roots.append(stmt)
        out[name] = module
    return out


def _targets(stmt: ast.Assign | ast.AnnAssign) -> list[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


@dataclass
class Refs:
    names: set[Key] = field(default_factory=set)  # core names used exactly
    attributes: set[str] = field(default_factory=set)  # every attribute name read


def references(
    nodes: Iterable[ast.AST],
    imported: dict[str, Key],
    modules: dict[str, str],
    own: CoreModule | None = None,
    skip: Iterable[ast.AST] = (),
) -> Refs:
    """The core names and attribute names ``nodes`` use (not descending into ``skip``)."""
    refs = Refs()
    skipped = {id(s) for s in skip}
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Name):
            if own is not None and node.id in own.defs:
                refs.names.add((own.name, node.id))
            elif node.id in imported:
                refs.names.add(imported[node.id])
        elif isinstance(node, ast.Attribute):
            refs.attributes.add(node.attr)
            base = node.value
            if isinstance(base, ast.Name) and base.id in modules:
                refs.names.add((modules[base.id], node.attr))
            dotted = ast.unparse(base)
            if _core_module_of(dotted):
                refs.names.add((dotted.split(".")[2], node.attr))
        stack.extend(ast.iter_child_nodes(node))
    return refs


def _runpython_code(js: str) -> Iterator[str]:
    """The Python source of each ``runPython(...)`` string of a JS file."""
    for m in _RUN_PYTHON.finditer(js):
        literal = m.group(1)
        if literal[0] == "`":
            yield _INTERPOLATION.sub("0", literal[1:-1])
        elif literal[0] == '"':
            yield json.loads(literal)
        else:
            yield json.loads('"' + literal[1:-1].replace('"', '\\"').replace("\\'", "'") + '"')


def product_refs(root: Path = ROOT) -> Refs:
    """Everything the product outside oya/core uses of the core: Python files, and the browser's
    Python (one pseudo-module per JS file, so an import in one call resolves in the next)."""
    refs = Refs()
    sources = [
        p.read_text(encoding="utf-8")
        for base in (root / "oya", root / "pipelines")
        for p in sorted(base.rglob("*.py"))
        if root / "oya" / "core" not in p.parents
    ]
    for base in (root / "site_template" / "static", root / "oya" / "site"):
        for p in sorted(base.glob("**/*.*js")):
            if "vendor" not in p.relative_to(root).parts:
                sources.append("\n".join(_runpython_code(p.read_text(encoding="utf-8"))))
    for source in sources:
        tree = ast.parse(source)
        imported: dict[str, Key] = {}
        modules: dict[str, str] = {}
        _read_imports(tree, imported, modules)
        found = references([tree], imported, modules)
        refs.names |= found.names
        refs.attributes |= found.attributes
    return refs


def unused(core: dict[str, CoreModule], outside: Refs) -> list[str]:
    """Public core names (``module.name``, ``module.Class.method``) no used code reaches."""
    used: set[Key] = set()
    attributes: set[str] = set()
    visited: set[object] = set()
    todo: list[Refs] = [outside]
    for module in core.values():
        todo.append(references(module.roots, module.imported, module.modules, module))
    while todo:
        refs = todo.pop()
        for key in refs.names - used:
            used.add(key)
            module = core.get(key[0])
            if module is None or key[1] not in module.defs:
                continue
            stmt = module.defs[key[1]]
            methods = module.methods.get(key[1], {})
            # a class's own body (bases, decorators, fields) and its dunders run when it is used
            implicit = [m for n, m in methods.items() if n.startswith("__") and n.endswith("__")]
            todo.append(references([stmt], module.imported, module.modules, module, methods.values()))
            todo.append(references(implicit, module.imported, module.modules, module))
        for name in refs.attributes - attributes:
            attributes.add(name)
            for module in core.values():
                for methods in module.methods.values():
                    method = methods.get(name)
                    if method is not None and id(method) not in visited:
                        visited.add(id(method))
                        todo.append(references([method], module.imported, module.modules, module))
    out = []
    for module in core.values():
        for name in module.defs:
            if name.startswith("_"):
                continue
            if (module.name, name) not in used:
                out.append(f"{module.name}.{name}")
            elif name in module.methods:
                out += [
                    f"{module.name}.{name}.{m}"
                    for m in module.methods[name]
                    if not m.startswith("_") and m not in attributes
                ]
    return sorted(out)


def core_sources(core: Path = CORE) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(core.glob("*.py")) if p.stem != "__init__"}


def test_every_public_name_of_the_core_has_a_caller_in_the_product() -> None:
    assert unused(parse_core(core_sources()), product_refs()) == []


def test_an_uncalled_function_a_chain_of_them_and_an_unused_method_are_found() -> None:
    core = core_sources()
    core["graph"] += "\n\ndef probe_unused(x: int) -> int:\n    return probe_helper(x)\n"
    core["graph"] += "\n\ndef probe_helper(x: int) -> int:\n    return x\n"
    core["vectors"] = core["vectors"].replace(
        "    def __len__(self) -> int:",
        "    def probe_method(self) -> int:\n        return 0\n\n    def __len__(self) -> int:",
    )
    assert unused(parse_core(core), product_refs()) == [
        "graph.probe_helper",  # its only caller is unused itself
        "graph.probe_unused",
        "vectors.VectorIndex.probe_method",
    ]


def test_a_caller_in_the_product_or_in_the_browser_counts() -> None:
    core = parse_core({"m": "def used_by_cli() -> None: ...\n\ndef used_by_browser() -> None: ...\n"})
    cli = ast.parse("from oya.core.m import used_by_cli\nused_by_cli()\n")
    imported: dict[str, Key] = {}
    _read_imports(cli, imported, {})
    outside = references([cli], imported, {})
    assert unused(core, outside) == ["m.used_by_browser"]
    js = 'pyodide.runPython("from oya.core.m import used_by_browser");\nx = pyodide.runPython(`used_by_browser(${n})`);'
    code = ast.parse("\n".join(_runpython_code(js)))
    imported = {}
    _read_imports(code, imported, {})
    assert unused(core, references([code], imported, {})) == ["m.used_by_cli"]
