"""How Oya's tests and benchmarks find and start Chromium: headless and off the network.

One definition for both, so a flag added for one (Chromium keeps finding new hosts to call)
reaches the other, and one lookup, which `make test`'s set-up (oya/system_deps.py) uses too: a
Chromium that is already there under another name is used, never replaced.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

CHROMIUM_ENV = "OYA_CHROMIUM"
# Debian's package first; then the names other packagers use. Never a browser downloaded by a test tool.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

OFFLINE_CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Chromium still looks up Google hosts despite the flags above: resolve nothing but loopback.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
)


def find_chromium() -> str | None:
    """``$OYA_CHROMIUM`` if set (and executable), else the first of ``CHROMIUM_NAMES`` on PATH."""
    chosen = os.environ.get(CHROMIUM_ENV)
    if chosen:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing_chromium_message() -> str:
    """One line saying why no Chromium was found and how to get one."""
    chosen = os.environ.get(CHROMIUM_ENV)
    if chosen:
        return f"{CHROMIUM_ENV}={chosen} is not an executable file; point it at a Chromium or unset it"
    return (
        f"no Chromium on PATH (looked for {', '.join(CHROMIUM_NAMES)}); run "
        f"`sudo apt-get install chromium`, or set {CHROMIUM_ENV}=/path/to/chromium"
    )


# The Ask panel's test hooks (globalThis.oyaAsk) are a module of the template that built sites leave
# out (oya/site/build.py); tests and benchmarks answer its URL from the template and import it.
TEST_HOOKS = "static/ask/test_hooks.js"
# In the page: import the hooks from the page's own site root (ask.js's copy), resolve when oyaAsk is set.
IMPORT_TEST_HOOKS_JS = (
    "() => import(new URL((document.body.dataset.root || '') + '"
    + TEST_HOOKS
    + "', document.baseURI).href).then(() => true)"
)


def route_test_hooks(context: Any, hooks_file: Path | None = None) -> None:
    """Make every ``…/static/ask/test_hooks.js`` request of a playwright ``context`` get the template's file."""
    from oya.site.build import STATIC_DIR  # the site builder's template, where it is installed

    body = (hooks_file or STATIC_DIR.parent / TEST_HOOKS).read_bytes()
    context.route(
        "**/" + TEST_HOOKS,
        lambda route: route.fulfill(status=200, body=body, content_type="text/javascript; charset=utf-8"),
    )


def load_test_hooks(page: Any) -> None:
    """Import the test hooks into ``page`` (a site page whose context went through ``route_test_hooks``)."""
    page.evaluate(IMPORT_TEST_HOOKS_JS)
