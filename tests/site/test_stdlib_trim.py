"""The site's trimmed Python standard library (``oya.site.stdlib_trim``) runs the engine worker's core.

The real Pyodide runs in Node as the worker runs it (tests/core_pyodide/answer_in_node.mjs): once
with Pyodide's whole library, recording the modules the core imports from it, which must all be
listed; then from the trimmed zip, answering every request exactly as CPython answers it, over the
shards and over the whole bundle, with and without a question vector, plus condensing long reports.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from test_pages import SAMPLE_REPO, make_index, write_whole_bundle

from bench.variants.whole_bundle import decode_bundle
from oya.core.bundle import ask_json
from oya.core.query import MAX_QUESTION_CHARS
from oya.core.report import condense_report
from oya.core.shard_store import folder_fetch
from oya.core.shards import open_shards
from oya.embedding.embedder import HashingEmbedder
from oya.settings import default_cache_dir
from oya.site.bundle import bundle_document
from oya.site.core_wheel import build_core_wheel, core_sources
from oya.site.shards import export_shards
from oya.site.stdlib_trim import STDLIB_MODULES, keeps, member_module, trim_stdlib, trimmed_stdlib
from oya.site.vendor import copy_runtime, core_bytecode, ensure_vendor, stdlib_source
from oya.store.index import Index

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNNER = REPO_ROOT / "tests" / "core_pyodide" / "answer_in_node.mjs"
QUESTIONS = (
    "How is stock removed when an order ships?",
    "What happens when more units are removed than are in stock?",
    "Where is the low stock report built?",
    "how does the bundle decode postings lazily",
    "parse_quantity",
    "reciprocal rank fusion of the channel lists",
    "naïve café — ünïcode question «quoted» 名前",
)
# a pasted bug report over the core's limit (oya.core.report condenses it)
REPORT = "\n".join(
    ["Crash on restock", *(f'  File "inventory/service.py", line {n}, in restock_item' for n in range(900))]
    + ["KeyError: 'ABC'"]
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The sample repository and a part of Oya's core, indexed (hashing embedder), as bundle and shards."""
    work = tmp_path_factory.mktemp("stdlib")
    repo = work / "repo"
    shutil.copytree(SAMPLE_REPO, repo)
    shutil.copytree(
        REPO_ROOT / "oya" / "core", repo / "oya" / "core", ignore=shutil.ignore_patterns("__pycache__")
    )
    index_dir = make_index(repo, work / "index")
    with Index(index_dir) as index:
        doc, vec_bytes = bundle_document(index)
    write_whole_bundle(doc, vec_bytes, work / "bundle")
    info = export_shards(doc, vec_bytes, work / "shards", term_bytes=3_000, chunk_bytes=12_000)
    embed = HashingEmbedder()
    asks: list[dict[str, Any]] = []
    for q in QUESTIONS:
        asks.append({"question": q, "options": {}, "semantic_reason": "the question model is still loading"})
        asks.append({"question": q, "options": {}, "vector": embed.vector(q)})
        asks.append({"question": q, "options": {"k": 5}, "vector": embed.vector(q)})
    requests = {
        "manifest": info["manifest"],
        "asks": asks,
        "reports": [REPORT, "short question"],
        "rank": [[embed.vector(QUESTIONS[0]), 20]],
    }
    (work / "requests.json").write_text(json.dumps(requests), encoding="utf-8")
    # the wheel a site ships: the core as bytecode its own Pyodide compiled
    bytecode = core_bytecode(ensure_vendor(default_cache_dir()), core_sources(), default_cache_dir())
    assert bytecode, "the core could not be compiled by the vendored Pyodide"
    return {"work": work, "requests": requests, "wheel": build_core_wheel(work / "wheel", bytecode=bytecode)}


def _cpython(built: dict[str, Any]) -> dict[str, Any]:
    """What the Node runner prints, answered by the core in CPython."""
    work, req = built["work"], built["requests"]
    sharded = open_shards(folder_fetch(work / "shards"), req["manifest"])
    whole = decode_bundle(
        (work / "bundle" / "index.json.gz").read_bytes(), (work / "bundle" / "vectors.bin.gz").read_bytes()
    )
    condensed = []
    for text in req["reports"]:
        c = condense_report(text, MAX_QUESTION_CHARS)
        condensed.append(None if c is None else [c.text, c.note(more=False)])
    return {
        "sharded": [ask_json(sharded, json.dumps(r)) for r in req["asks"]],
        "whole": [ask_json(whole, json.dumps(r)) for r in req["asks"]],
        "condensed": condensed,
        "ranked": [json.dumps(sharded.rank_vectors(v, n)) for v, n in req["rank"]],
    }


def _pyodide(built: dict[str, Any], stdlib: Path | None) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node is missing: running the core under Pyodide needs Node.js"
    pyodide_dir = ensure_vendor(default_cache_dir()) / "pyodide"
    work = built["work"]
    cmd = [node, str(RUNNER), "--pyodide", str(pyodide_dir), "--wheel", str(built["wheel"])]
    cmd += [
        "--shards",
        str(work / "shards"),
        "--bundle",
        str(work / "bundle"),
        "--reference",
        str(REPO_ROOT / "bench" / "variants" / "whole_bundle.py"),
        "--requests",
        str(work / "requests.json"),
    ]
    if stdlib is not None:
        cmd += ["--stdlib", str(stdlib)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    # Node prints the minified line an error came from: keep the readable lines
    errors = "\n".join(line for line in proc.stderr.splitlines() if len(line) < 500)[-4000:]
    assert proc.returncode == 0, f"the core failed under Pyodide (exit {proc.returncode}):\n{errors}"
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def _comparable(answers: list[str]) -> list[Any]:
    """ask_json answers without their timings (the only part that differs run to run)."""
    out = []
    for text in answers:
        doc = json.loads(text)
        doc.pop("timings_ms", None)
        out.append(doc)
    return out


def test_the_core_imports_only_listed_modules_and_answers_from_the_trimmed_zip(built: dict[str, Any]) -> None:
    modules = [n for n in zipfile.ZipFile(built["wheel"]).namelist() if n.startswith("oya/core/")]
    assert modules and all(n.endswith(".pyc") for n in modules), modules  # bytecode, no sources
    full = _pyodide(built, None)
    missing = [m for m in full["modules"] if not keeps(m, STDLIB_MODULES)]
    assert not missing, f"the core imports modules oya.site.stdlib_trim does not ship; add them: {missing}"

    trimmed = trimmed_stdlib(stdlib_source(ensure_vendor(default_cache_dir()) / "pyodide"))
    run = _pyodide(built, trimmed)
    want = _cpython(built)
    assert _comparable(run["sharded"]) == _comparable(want["sharded"])
    assert _comparable(run["whole"]) == _comparable(want["whole"])
    assert _comparable(run["sharded"]) == _comparable(run["whole"])
    assert run["condensed"] == want["condensed"] and want["condensed"][0] is not None
    assert run["ranked"] == want["ranked"]
    # the vector requests did run the semantic channel, the others did not
    ran = [
        {c["name"]: c["status"] for c in json.loads(a)["search_quality"]["channels"]}["semantic"] == "ran"
        for a in want["sharded"]
    ]
    assert ran == [False, True, True] * len(QUESTIONS), ran


def test_the_site_ships_the_trimmed_zip_under_pyodides_name(tmp_path: Path) -> None:
    vendor = ensure_vendor(default_cache_dir())
    copy_runtime(vendor, tmp_path)
    shipped = zipfile.ZipFile(tmp_path / "vendor" / "pyodide" / "python_stdlib.zip")
    assert shipped.namelist() == zipfile.ZipFile(trimmed_stdlib(stdlib_source(vendor / "pyodide"))).namelist()
    modules = {member_module(n) for n in shipped.namelist()} - {None}
    assert all(keeps(m, STDLIB_MODULES) for m in modules), modules
    assert {"json", "re", "pyodide", "encodings.utf_8"} <= modules


def test_every_stdlib_module_the_core_names_is_shipped() -> None:
    """Imports inside functions too (a path the recording did not run): each one the stdlib zip
    holds is in the list (the others are built into Pyodide: math, zlib, unicodedata, ...)."""
    source = stdlib_source(ensure_vendor(default_cache_dir()) / "pyodide")
    in_zip = {m for m in map(member_module, zipfile.ZipFile(source).namelist()) if m}
    named = set()
    for path in (REPO_ROOT / "oya" / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                named.add(node.module)
    shipped = sorted(m for m in named if m in in_zip)
    assert "json" in shipped and "re" in shipped, shipped
    assert [m for m in shipped if not keeps(m, STDLIB_MODULES)] == []


def test_the_trimmed_zip_keeps_the_listed_modules_and_is_deterministic(tmp_path: Path) -> None:
    src = tmp_path / "stdlib.zip"
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as z:
        for name in (
            "json/__init__.pyc",
            "json/decoder.pyc",
            "json/tool.pyc",
            "os.pyc",
            "asyncio/",
            "asyncio/tasks.pyc",
            "pyodide/__init__.pyc",
            "pyodide/ffi/__init__.pyc",
            "pyodide/py.typed",
            "tkinter/__init__.pyc",
        ):
            z.writestr(name, b"" if name.endswith("/") else name.encode())
    listed = ["json", "json.decoder", "os", "pyodide.*"]
    info = trim_stdlib(src, tmp_path / "a.zip", listed)
    names = zipfile.ZipFile(tmp_path / "a.zip").namelist()
    assert names == [
        "json/__init__.pyc",
        "json/decoder.pyc",
        "os.pyc",
        "pyodide/__init__.pyc",
        "pyodide/ffi/__init__.pyc",
    ]
    assert info["kept"] == 5
    trim_stdlib(src, tmp_path / "b.zip", reversed(listed))
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    assert member_module("json/__init__.pyc") == "json" and member_module("asyncio/") is None
    assert member_module("pyodide/py.typed") is None
