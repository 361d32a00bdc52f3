"""``oya serve``: the built wiki over HTTP with the standard library's static file server.

The site needs no server logic; this exists because browsers refuse ES modules, WebAssembly
and ``fetch`` from ``file://`` pages. It adds the MIME types Pyodide needs (``.mjs`` as
JavaScript, ``.wasm`` as ``application/wasm``) and stays quiet. It binds to 127.0.0.1 by default.

Theory of operation (security): a wiki may document private code, and a page from any web site
can make the reader's browser send requests to 127.0.0.1. So:

* Only requests whose ``Host`` names this server are served: ``localhost``, 127.0.0.1, [::1] or
  the bound address, with the bound port (any IP literal when bound to all interfaces). A
  hostile page that re-points its own domain at 127.0.0.1 (DNS rebinding) sends its domain as
  ``Host`` and gets 421 Misdirected Request, so it can never read a page as same-origin.
* Every response carries ``SECURITY_HEADERS`` (no MIME sniffing, no referrer, its own browsing
  context group, no use from other origins) and HTML pages the Content-Security-Policy their
  <meta> tag holds, plus ``frame-ancestors 'none'``, which a <meta> tag cannot express.
* Folders are never listed: a folder without index.html is 404.
* A request path that can name no file is refused before it reaches the file system
  (``request_path_problem``): 400 for a NUL, an invalid percent-escape or UTF-8 sequence, a raw
  backslash or control character, or a ``..`` segment (after decoding); 414 past the system's
  path length. The standard handler would raise on some of them (``open`` refuses a NUL) and
  print a traceback per request; any error left is one line on stderr (``SiteServer``).

Theory of operation (speed): the site build writes ``<file>.br`` and ``<file>.gz`` beside its
compressible files and gives its large assets content-hashed names listed in ``manifest.json``
(``oya.site.assets``). A browser that accepts an encoding gets the precompressed copy with
``Content-Encoding`` (Brotli first); a path under a hashed name is cached for a year as
``immutable``, everything else with ``no-cache`` (revalidated: 304 when unchanged), so a second
visit transfers no large file at all.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import os
import re
import socket
import sys
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote_to_bytes

from oya.errors import SiteError
from oya.site.csp import CSP

# Sent with every response; README.md ("Security") lists them for static hosts too.
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
PAGE_CSP = CSP + "; frame-ancestors 'none'"  # with text/html responses
_WILDCARD = ("", "0.0.0.0", "::")
PRECOMPRESSED = (("br", ".br"), ("gzip", ".gz"))  # preferred first
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
MAX_PATH_BYTES = 4095  # a decoded request path longer than the system allows names no file
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_RAW_OK = re.compile(r"[!-~]*")  # what a browser sends: visible ASCII, everything else escaped


def host_allowed(host_header: str | None, bound: tuple[Any, ...]) -> bool:
    """Whether a request's ``Host`` names the server bound at ``bound`` (``server_address``)."""
    if not host_header:
        return False
    host, port = _split_host(host_header.strip().lower())
    if port != int(bound[1]):
        return False
    if host == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False  # any other name may be a rebinding domain
    bound_host = str(bound[0])
    return ip.is_loopback or bound_host in _WILDCARD or ip == ipaddress.ip_address(bound_host)


def _split_host(value: str) -> tuple[str, int | None]:
    """``("::1", 8000)`` from ``[::1]:8000``, ``("localhost", 80)`` from ``localhost``."""
    host, sep, port = value.rpartition(":")
    if not sep or "]" in port:  # no port, or only the colons of a bare [v6] literal
        host, port = value, "80"
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port) if port.isdigit() else None


def request_path_problem(target: str) -> tuple[int, str] | None:
    """Why a request target can name no file of the site, as (status, reason); None when it may.

    Only the path is judged (the query and fragment are ignored, as the file server does). Control
    characters other than NUL stay allowed once decoded: a repository file may be named with one,
    and its page is named after it (``oya.core.sitepaths``)."""
    path = target.split("?", 1)[0].split("#", 1)[0]
    if not _RAW_OK.fullmatch(path) or "\\" in path:
        return 400, "the path holds a raw space, control character, backslash or non-ASCII byte"
    if _BAD_ESCAPE.search(path):
        return 400, "the path holds a % not followed by two hexadecimal digits"
    raw = unquote_to_bytes(path)
    if len(raw) > MAX_PATH_BYTES:
        return 414, "the path is longer than any file's"
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return 400, "the path is not valid UTF-8 once decoded"
    if "\0" in decoded:
        return 400, "the path holds a NUL byte"
    if ".." in decoded.split("/"):
        return 400, "the path climbs out with a .. segment"
    return None


BUILD_HINT = "build it with: oya build REPO --site (the site goes to <index folder>/site)"


def accepted_encodings(header: str | None) -> set[str]:
    """The codings an ``Accept-Encoding`` header accepts (``q=0`` refuses one)."""
    out = set()
    for part in (header or "").lower().split(","):
        name, _, params = part.partition(";")
        q = params.strip().removeprefix("q=") if params.strip().startswith("q=") else "1"
        try:
            if name.strip() and float(q) > 0:
                out.add(name.strip())
        except ValueError:
            continue
    return out


_HASHED: dict[str, tuple[float, tuple[str, ...]]] = {}  # manifest path -> (mtime, hashed prefixes)


def hashed_prefixes(site_dir: str) -> tuple[str, ...]:
    """The content-hashed names of the site's manifest (``assets``), re-read when it changes."""
    path = os.path.join(site_dir, "manifest.json")
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return ()
    cached = _HASHED.get(path)
    if cached and cached[0] == mtime:
        return cached[1]
    try:
        assets = json.loads(open(path, encoding="utf-8").read()).get("assets") or {}
    except (OSError, ValueError, AttributeError):
        assets = {}
    prefixes = tuple(str(v) for v in assets.values())
    _HASHED[path] = (mtime, prefixes)
    return prefixes


class SiteRequestHandler(SimpleHTTPRequestHandler):
    _content_type = ""  # of the response being sent
    _cache_control = REVALIDATE
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

    def parse_request(self) -> bool:
        """Refuse (421) a request whose ``Host`` does not name this server, for any method."""
        self._content_type = ""
        self._cache_control = REVALIDATE
        if not super().parse_request():
            return False
        bound = self.server.server_address
        if not isinstance(bound, tuple) or not host_allowed(self.headers.get("Host"), bound):
            self.send_error(421, "Misdirected Request", "This server only answers to its own address.")
            return False
        return True

    def do_GET(self) -> None:
        if not self._refused():
            super().do_GET()

    def do_HEAD(self) -> None:
        if not self._refused():
            super().do_HEAD()

    def _refused(self) -> bool:
        """Answer a path that can name no file with its 4xx (``request_path_problem``)."""
        problem = request_path_problem(self.path)
        if problem is not None:
            self.send_error(problem[0], explain=problem[1])
        return problem is not None

    def send_header(self, keyword: str, value: str) -> None:
        if keyword.lower() == "content-type":
            self._content_type = value.lower()
        super().send_header(keyword, value)

    def end_headers(self) -> None:
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        if self._content_type.startswith("text/html"):
            self.send_header("Content-Security-Policy", PAGE_CSP)
        self.send_header("Cache-Control", self._cache_control)
        self.send_header("Vary", "Accept-Encoding")
        super().end_headers()

    def send_head(self) -> IO[bytes] | None:  # type: ignore[override]
        """The file, or its precompressed copy for a browser that accepts it; sets the caching."""
        path = self.translate_path(self.path)
        if os.path.isdir(path) and self.path.split("?", 1)[0].endswith("/"):
            path = os.path.join(path, "index.html")
        rel = os.path.relpath(path, self.directory).replace(os.sep, "/")
        if any(rel.startswith(prefix) for prefix in hashed_prefixes(self.directory)):
            self._cache_control = IMMUTABLE
        accepted = accepted_encodings(self.headers.get("Accept-Encoding"))
        for coding, suffix in PRECOMPRESSED:
            if coding in accepted and os.path.isfile(path) and os.path.isfile(path + suffix):
                return self._send_encoded(path, path + suffix, coding)
        return super().send_head()

    def _send_encoded(self, path: str, encoded: str, coding: str) -> IO[bytes] | None:
        f = open(encoded, "rb")  # noqa: SIM115 (closed by the caller, as SimpleHTTPRequestHandler's)
        stat = os.fstat(f.fileno())
        if self._not_modified(stat.st_mtime):
            f.close()
            self.send_response(304)
            self.end_headers()
            return None
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", coding)
        self.send_header("Content-Length", str(stat.st_size))
        self.send_header("Last-Modified", self.date_time_string(int(stat.st_mtime)))
        self.end_headers()
        return f

    def _not_modified(self, mtime: float) -> bool:
        since = self.headers.get("If-Modified-Since")
        if not since or self.headers.get("If-None-Match"):
            return False
        try:
            when = email.utils.parsedate_to_datetime(since)
        except (TypeError, ValueError, IndexError, OverflowError):
            return False
        return when.tzinfo is not None and int(mtime) <= when.timestamp()

    def list_directory(self, path: Any) -> None:
        """No folder listings: a folder without index.html does not exist."""
        self.send_error(404, "File not found")


def make_server(
    site_dir: Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    handler_class: type[SiteRequestHandler] = SiteRequestHandler,
) -> SiteServer:
    """A server for ``site_dir`` (not yet serving); ``port=0`` picks a free port.

    ``handler_class``: a subclass of ``SiteRequestHandler`` (bench/browser_harness.py meters it)."""
    site_dir = Path(site_dir)
    if not site_dir.is_dir():
        raise SiteError(f"no site at {site_dir}; {BUILD_HINT}")
    if not (site_dir / "index.html").is_file():
        raise SiteError(f"{site_dir} has no index.html, so it is not a built Oya site; {BUILD_HINT}")
    handler = partial(handler_class, directory=str(site_dir.resolve()))
    server_class = _IPv6Server if ":" in host else SiteServer
    try:
        return server_class((host.strip("[]"), port), handler)
    except OSError as exc:
        raise SiteError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


class SiteServer(ThreadingHTTPServer):
    """A threading server that says nothing when a reader leaves mid-download, and one line for
    any other error answering a request.

    A reader who follows a link while the query model (17 MB) is still arriving closes the
    connection; the standard server prints a traceback for each such request to the terminal
    that runs ``oya serve``. Any other error is one line (the request is dropped, the server
    goes on); ``OYA_DEBUG=1`` prints the traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            return
        if os.environ.get("OYA_DEBUG"):
            super().handle_error(request, client_address)
            return
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        print(f"oya serve: a request failed: {type(exc).__name__}: {first}", file=sys.stderr, flush=True)


class _IPv6Server(SiteServer):
    address_family = socket.AF_INET6


def serve_site(site_dir: Path, host: str = "127.0.0.1", port: int = 8000, console: Any = None) -> None:
    """Serve ``site_dir`` until interrupted, printing its URL (the real port when ``port=0``)."""
    server = make_server(site_dir, host, port)
    real_host, real_port = str(server.server_address[0]), int(server.server_address[1])
    shown = "127.0.0.1" if real_host in _WILDCARD else f"[{real_host}]" if ":" in real_host else real_host
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
