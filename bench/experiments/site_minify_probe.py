"""How much an HTML minifier would take off a built site's pages (measured, not shipped).

Theory of operation: every ``.html`` of a site (``vendor/`` left out) is passed through
minify-html with the options that keep it valid HTML5 (optional end tags and attribute quotes
dropped, whitespace collapsed outside ``<pre>``, CSS and JS left alone); the script prints the
bytes before and after and the seconds. docs/DECISIONS.md ("No HTML minifier on the pages")
records the result for networkx: 4.3% less, not worth a dependency.

Run: ``pip install --target /tmp/mh minify-html==0.18.1`` then
``PYTHONPATH=/tmp/mh .venv/bin/python -m bench.experiments.site_minify_probe
bench/.cache/site_build/networkx==3.6.1/out/site`` (the site ``bench/site_build_bench.py`` leaves behind).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def main() -> None:
    try:
        import minify_html  # not a dependency of Oya: installed aside for this probe
    except ImportError:
        sys.exit("minify-html is not installed; see this script's docstring")
    site = Path(sys.argv[1])
    raw = small = pages = 0
    t0 = time.perf_counter()
    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).parts[0] == "vendor":
            continue
        text = page.read_text(encoding="utf-8")
        out = minify_html.minify(text, keep_closing_tags=False, minify_css=False, minify_js=False)
        raw += len(text.encode("utf-8"))
        small += len(out.encode("utf-8"))
        pages += 1
    seconds = time.perf_counter() - t0
    print(
        f"{pages} pages: {raw / 1e6:.2f} MB -> {small / 1e6:.2f} MB ({1 - small / raw:.1%} less) in {seconds:.1f} s"
    )


if __name__ == "__main__":
    main()
