"""The answer's diagram as a reader meets it, in a real, offline Chromium (issue 14).

A small repository has a three-function call chain across three modules (``ingest_orders`` ->
``parse_order_lines`` -> ``normalise_order``) among distractions: every module imports the others,
and other functions call each other nearby. It is indexed with the real MiniLM, built into a site,
and asked a question whose answer crosses the chain. The diagram drawn in the panel (the SVG) must
hold that chain, nodes and edges in order down the page, at most the node cap
(``RetrievalOptions.diagram_nodes``) and no ``imports`` arrow; no two labels may overlap (their
bounding boxes); every node must link to its symbol's wiki page. Screenshots of the panel and of
the diagram are saved to test-artifacts/screenshots/ (printed), passing or not: look at them.
"""

from __future__ import annotations

import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from test_ask_panel import Server, ask_in_panel, serve
from test_pages import scan_html

from oya.core.options import RetrievalOptions
from oya.core.sitepaths import page_url

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
CHAIN = ("ingest_orders", "parse_order_lines", "normalise_order")
QUESTION = "How are orders ingested, parsed into lines and normalised?"

FILES = {
    "shop/__init__.py": '"""A tiny order shop."""\n',
    "shop/ingest.py": '''
        """Reading order files into the store."""

        import json
        import os

        from shop import parse, report, store


        def ingest_orders(path):
            """Ingest an order file: parse its lines into orders and keep them in the store."""
            with open(path, encoding="utf-8") as handle:
                orders = parse.parse_order_lines(handle.read())
            for order in orders:
                store.save_order(order)
            return len(orders)


        def ingest_folder(folder):
            """Every order file in a folder."""
            return sum(ingest_orders(os.path.join(folder, name)) for name in sorted(os.listdir(folder)))


        def dump_state():
            return json.dumps(report.totals())
        ''',
    "shop/parse.py": '''
        """Order lines: one order per line, fields split by semicolons."""

        from shop import normalise, report, store


        def parse_order_lines(text):
            """Parse the text of an order file into orders, one per non-empty line, each normalised."""
            orders = []
            for line in text.splitlines():
                if line.strip():
                    orders.append(normalise.normalise_order(line.split(";")))
            return orders


        def split_fields(line):
            return [f.strip() for f in line.split(";")]
        ''',
    "shop/normalise.py": '''
        """Cleaning the fields of one order."""

        from shop import money, report


        def normalise_order(fields):
            """Normalise one order's fields: trimmed customer name, upper-case SKU, whole quantity."""
            customer, sku, quantity = fields
            return {"customer": clean_name(customer), "sku": sku.strip().upper(), "quantity": int(quantity)}


        def clean_name(name):
            return " ".join(name.split()).title()
        ''',
    "shop/store.py": '''
        """Where orders are kept."""

        from shop import money, report

        ORDERS = []


        def save_order(order):
            ORDERS.append(order)


        def all_orders():
            return list(ORDERS)
        ''',
    "shop/money.py": '''
        """Money formatting."""

        from shop import report


        def format_money(cents):
            return f"{cents / 100:.2f} EUR"


        def parse_money(text):
            return int(round(float(text) * 100))
        ''',
    "shop/report.py": '''
        """Reports over the stored orders."""

        from shop import money, store


        def totals():
            """Quantity ordered per SKU."""
            out = {}
            for order in store.all_orders():
                out[order["sku"]] = out.get(order["sku"], 0) + order["quantity"]
            return out


        def print_report():
            for sku, count in sorted(totals().items()):
                print(sku, count, money.format_money(count * 100))
        ''',
    "README.md": "# shop\n\nA tiny order shop: ingest order files, keep orders, report totals.\n",
}

# What the panel's SVG holds: each node's label, id, link and box; each edge's ends; each label's box.
READ_SVG_JS = """svg => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const nodes = [...svg.querySelectorAll("g.node")].map((g) => {
    const link = g.closest("a");
    return {
      id: g.id.replace(/^.*-flowchart-/, "").replace(/-\\d+$/, ""),
      label: g.querySelector("text").textContent.trim(),
      href: link ? link.href.baseVal || link.getAttribute("href") || link.getAttribute("xlink:href") : null,
      box: box(g),
    };
  });
  const edges = [...svg.querySelectorAll("path.flowchart-link")].map((p) => {
    const m = (p.dataset.id || p.id).match(/L_(n\\d+)_(n\\d+)_\\d+$/);
    return { from: m[1], to: m[2], dashed: p.classList.contains("edge-pattern-dotted") };
  });
  const labels = [...svg.querySelectorAll("g.node text, g.edgeLabel text")]
    .filter((t) => t.textContent.trim())
    .map((t) => ({ text: t.textContent.trim(), box: box(t) }));
  return { nodes, edges, labels };
}"""


def write_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def chain_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The chain repository indexed with the real MiniLM and built into a full site."""
    from test_pages import build_site

    from pipelines.build import run_build

    work = tmp_path_factory.mktemp("chain_site")
    repo = write_repo(work / "repo")
    run_build(repo, work / "index", embedder="minilm")
    build_site(work / "index", work / "site")
    return work / "site"


@pytest.fixture(scope="module")
def chain_server(chain_site: Path) -> Any:
    with serve(chain_site) as server:
        yield server


def overlapping(labels: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of labels whose boxes intersect (touching edges do not count)."""
    out = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            (l1, t1, r1, b1), (l2, t2, r2, b2) = a["box"], b["box"]
            if min(r1, r2) - max(l1, l2) > 0.5 and min(b1, b2) - max(t1, t2) > 0.5:
                out.append((a["text"], b["text"]))
    return out


def save_screenshots(page: Any, entry: Any, name: str) -> list[Path]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shots = [SCREENSHOTS / f"{name}_panel.png", SCREENSHOTS / f"{name}_diagram.png"]
    page.locator("#ask-panel").screenshot(path=str(shots[0]))
    entry.locator(".ask-diagram").screenshot(path=str(shots[1]))
    print("screenshots:", *shots)
    return shots


def test_the_answer_diagram_shows_the_call_chain(chain_server: Server, browser_page: Any) -> None:
    page = browser_page.page
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(chain_server.url + "files/shop/report.py.html")
    page.click("#ask-toggle")
    ask_in_panel(page, QUESTION)
    entry = page.locator(".ask-entry").last
    svg = entry.locator(".ask-mermaid svg").first
    svg.wait_for()
    time.sleep(0.3)  # fitDiagram sizes the SVG on the next frame
    entry.locator(".ask-diagram").scroll_into_view_if_needed()
    save_screenshots(page, entry, "answer_chain")
    drawn = svg.evaluate(READ_SVG_JS)

    by_label = {n["label"]: n for n in drawn["nodes"]}
    cap = RetrievalOptions().diagram_nodes
    assert 3 <= len(drawn["nodes"]) <= cap, drawn["nodes"]
    assert all(name in by_label for name in CHAIN), sorted(by_label)
    edges = {(e["from"], e["to"]) for e in drawn["edges"]}
    ids = [by_label[name]["id"] for name in CHAIN]
    assert (ids[0], ids[1]) in edges and (ids[1], ids[2]) in edges, (ids, edges)
    tops = [by_label[name]["box"][1] for name in CHAIN]
    assert tops[0] < tops[1] < tops[2], f"the chain does not run down the page: {tops}"
    assert not any(e["dashed"] for e in drawn["edges"]), "imports (dashed) drawn beside the calls"

    assert not overlapping(drawn["labels"]), overlapping(drawn["labels"])
    for node in drawn["nodes"]:
        assert node["href"] and node["href"].startswith(chain_server.url), node
    chain_links = [by_label[name]["href"] for name in CHAIN]
    paths = ["shop/ingest.py", "shop/parse.py", "shop/normalise.py"]
    for href, path in zip(chain_links, paths, strict=True):
        assert href.split("#")[0] == chain_server.url + page_url(path), href
        with urllib.request.urlopen(href.split("#")[0]) as response:  # loopback only
            html = response.read().decode("utf-8")
        assert href.split("#")[1] in scan_html(html).ids, href

    # a node is a link: clicking the first of the chain opens its page at its line
    svg.locator("a").filter(has_text=CHAIN[0]).first.click()
    page.wait_for_url(chain_links[0])
    assert not chain_server.missing, chain_server.missing
    assert not [c for c in browser_page.console if c.startswith(("pageerror", "error"))], browser_page.console
