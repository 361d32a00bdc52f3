"""``oya serve``: the built wiki over HTTP with the standard library's static file server.

The site needs no server logic; this exists because browsers refuse ES modules, WebAssembly
and ``fetch`` from ``file://`` pages. It only adds the MIME types Pyodide needs (``.mjs`` as
JavaScript, ``.wasm`` as ``application/wasm``) and stays quiet. It binds to 127.0.0.1 by default.
"""

from __future__ import annotations

from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from oya.errors import SiteError

BUILD_HINT = "build it with: oya build REPO --site (the site goes to <index folder>/site)"


class SiteRequestHandler(SimpleHTTPRequestHandler):
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".html": "text/html; charset=utf-8",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".css": "text/css",
        ".json": "application/json",
        ".wasm": "application/wasm",
        ".whl": "application/zip",
        ".onnx": "application/octet-stream",
        ".bin": "application/octet-stream",
    }

    def log_message(self, format: str, *args: Any) -> None:  # quiet: no line per request
        pass


def make_server(site_dir: Path, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``site_dir`` (not yet serving); ``port=0`` picks a free port."""
    site_dir = Path(site_dir)
    if not site_dir.is_dir():
        raise SiteError(f"no site at {site_dir}; {BUILD_HINT}")
    if not (site_dir / "index.html").is_file():
        raise SiteError(f"{site_dir} has no index.html, so it is not a built Oya site; {BUILD_HINT}")
    handler = partial(SiteRequestHandler, directory=str(site_dir.resolve()))
    try:
        return ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        raise SiteError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


def serve_site(site_dir: Path, host: str = "127.0.0.1", port: int = 8000, console: Any = None) -> None:
    """Serve ``site_dir`` until interrupted, printing its URL (the real port when ``port=0``)."""
    server = make_server(site_dir, host, port)
    real_host, real_port = str(server.server_address[0]), int(server.server_address[1])
    shown = "127.0.0.1" if real_host in ("0.0.0.0", "") else real_host
    url = f"http://{shown}:{real_port}/"
    message = f"Serving {site_dir} at {url} (Ctrl+C to stop)"
    if console is not None:
        console.print(message, highlight=False, markup=False)
    else:
        print(message, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
