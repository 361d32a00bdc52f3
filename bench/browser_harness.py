"""Measure a built Oya site in headless Chromium as a reader meets it: bytes over the wire and seconds
from navigation to the first answer in the Ask panel, on a cold and on a warm visit, under throttling.

Theory of operation:

* Server: the site on 127.0.0.1 (random port) by `oya serve`'s server (``oya.site.serve.make_server``,
  ``--server oya``) or by the standard library's plain static server (``--server plain``, what
  ``python -m http.server`` runs), optionally under a sub-path (``--prefix /team/wiki/``: everything
  outside it is 404, as on a host that serves the wiki from a folder). The server counts every byte
  it writes per request (headers and body, as sent: compressed when it compressed), so the count is
  exact and covers the page, its workers and onnxruntime's proxy worker alike; a request the browser
  answers from its cache never reaches it. (A page's CDP ``Network`` events miss its workers.)
* Browser: Debian Chromium through Python's playwright (never ``playwright install``), with the
  offline flags below (``OFFLINE_CHROMIUM_ARGS``, shared with the real-browser tests). Cold = a fresh user-data-dir; warm = the same user-data-dir
  in a new browser (the second visit: HTTP cache and Cache API on disk, a new Pyodide). No playwright
  route is set (any route turns Chromium's HTTP cache off); requests to anything but 127.0.0.1
  cannot resolve and are listed in ``offsite``. Throttling: CDP ``Network.emulateNetworkConditions``
  on the page (default 20 Mbit/s down, 40 ms RTT); Chromium applies it to the page's workers too.
* First answer: the page is opened with ``?ask=<question>`` (the panel's deep link), so loading
  starts at navigation; the time is the page's ``performance.now()`` when the first answered entry
  is in the panel's DOM (while the query model loads, the panel first shows the core's answer
  without the semantic channel, marked ``.ask-partial``); "full" is when the complete answer
  replaced it. An entry showing an error fails the run. Bytes to the first answer are those of the
  responses the server had finished writing before it (the downloads still running are listed as
  in flight; ``bytes_with_in_flight`` counts them whole, an upper bound); bytes to the full answer
  those of the requests the server began to answer before it.
* Warm questions: after the warm first answer, each of the questions is asked through the panel
  (``oyaAsk.ask`` of the test hooks, ``bench/ask_test_hooks.js``, which this server answers at
  static/ask/test_hooks.js: no built site holds them): wall time per question (panel rendering included) and the engine's own
  ``browser_timings_ms.query`` (embed + ranking + the core), and what the page fetched for each
  question (bytes, the sharded bundle's ``/shards/`` bytes, requests), p50/p95: nearest-rank
  (``bench.common.percentile``). Until issue 23, p50 was the interpolated median and p95 the value
  at index round(0.95 (n - 1)): for the 30 questions of ``results/browser_bench.json`` (2026-11-27)
  and the 50 of ``big_site_bench.json`` the same p95 as nearest-rank, but each p50 the mean of the
  two middle values, where nearest-rank takes the lower.
* Memory after the warm questions: the page's JS heap (CDP ``Runtime.getHeapUsage``) and the
  proportional set size of every Chromium process (Pyodide's memory lives in the renderer process,
  with its workers).

As a module: ``measure(site_dir, questions, ...) -> dict``. As a command: see ``--help``; prints a
table, ``--json FILE`` writes the result.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from bench.common import BENCH_DIR, load_avg, percentile, write_json
from oya.site.serve import SiteRequestHandler, make_server
from oya.system_deps import find_chromium

# How the real-browser tests and the site benches start Chromium: headless and off the network. One
# definition for both, so a flag added for one (Chromium keeps finding new hosts to call) reaches
# the other.
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
CHROMIUM_ARGS = [*OFFLINE_CHROMIUM_ARGS, "--enable-precise-memory-info"]
# The Ask panel's test hooks (globalThis.oyaAsk) are not part of Oya: the file lives here and the
# tests and benches answer its URL beside the panel's modules (``<root>static/ask/test_hooks.js``),
# so its imports of ``../ask.js`` reach the page's own engine.
TEST_HOOKS = "static/ask/test_hooks.js"
HOOKS_FILE = BENCH_DIR / "ask_test_hooks.js"
# In the page: import the hooks from the page's own site root, resolve when oyaAsk is set.
IMPORT_TEST_HOOKS_JS = (
    "() => import(new URL((document.body.dataset.root || '') + '"
    + TEST_HOOKS
    + "', document.baseURI).href).then(() => true)"
)


def route_test_hooks(context: Any, hooks_file: Path = HOOKS_FILE) -> None:
    """Make every ``…/static/ask/test_hooks.js`` request of a playwright ``context`` get the hooks."""
    body = hooks_file.read_bytes()
    context.route(
        "**/" + TEST_HOOKS,
        lambda route: route.fulfill(status=200, body=body, content_type="text/javascript; charset=utf-8"),
    )


def load_test_hooks(page: Any) -> None:
    """Import the test hooks into ``page`` (a site page whose context went through ``route_test_hooks``)."""
    page.evaluate(IMPORT_TEST_HOOKS_JS)


ANSWERED = ".ask-entry:not(.ask-pending)"
SHARD_PATH = "/shards/"  # the sharded bundle's folder in a site (oya.site.shards.SHARDS_DIR)
TIMEOUT_MS = 300_000


@dataclass(frozen=True)
class Network:
    down_mbit: float = 20.0
    rtt_ms: float = 40.0
    up_mbit: float = 10.0

    def cdp(self) -> dict[str, Any]:
        return {
            "offline": False,
            "latency": self.rtt_ms,
            "downloadThroughput": self.down_mbit * 1e6 / 8,
            "uploadThroughput": self.up_mbit * 1e6 / 8,
        }


@dataclass(frozen=True)
class Transfer:
    path: str
    status: int
    bytes: int
    encoding: str
    at: float  # epoch seconds when the server began to answer
    done: float  # ... and when it had written the last byte (the throttled reader sets the pace)


@dataclass
class WireLog:
    transfers: list[Transfer] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, transfer: Transfer) -> None:
        with self.lock:
            self.transfers.append(transfer)

    def take(self) -> list[Transfer]:
        with self.lock:
            out, self.transfers = self.transfers, []
        return out


class _CountingWriter:
    def __init__(self, raw: Any) -> None:
        self.raw, self.count = raw, 0

    def write(self, data: bytes) -> int:
        self.count += len(data)
        return int(self.raw.write(data) or 0)

    def __getattr__(self, name: str) -> Any:  # flush, close, closed: the socket writer's
        return getattr(self.raw, name)


class _Metered(SimpleHTTPRequestHandler):
    """Mixed in front of a server's handler: counts bytes, serves under ``prefix``, answers the test hooks."""

    wire: WireLog
    prefix = "/"
    _status = 0
    _encoding = ""
    _at = 0.0

    def setup(self) -> None:
        super().setup()
        self.wfile = _CountingWriter(self.wfile)  # type: ignore[assignment]

    def handle_one_request(self) -> None:
        self.wfile.count, self._status, self._encoding = 0, 0, ""  # type: ignore[attr-defined]
        super().handle_one_request()
        if self._status:
            path = urlsplit(getattr(self, "path", "")).path
            count = self.wfile.count  # type: ignore[attr-defined]
            self.wire.add(Transfer(path, self._status, count, self._encoding, self._at, time.time()))

    def send_response(self, code: int, message: str | None = None) -> None:
        self._status, self._at = code, time.time()
        super().send_response(code, message)

    def send_header(self, keyword: str, value: str) -> None:
        if keyword.lower() == "content-encoding":
            self._encoding = value
        super().send_header(keyword, value)

    def translate_path(self, path: str) -> str:
        if self.prefix != "/":
            if not path.startswith(self.prefix):
                return str(Path(self.directory) / ".outside-the-prefix" / "missing")
            path = "/" + path[len(self.prefix) :]
        return super().translate_path(path)

    def do_GET(self) -> None:
        if urlsplit(self.path).path == self.prefix + TEST_HOOKS:
            body = HOOKS_FILE.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


class _QuietPlain(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass(frozen=True)
class Served:
    url: str  # the site's root, ending in "/"
    wire: WireLog


@contextmanager
def serve(site_dir: Path, server: str = "oya", prefix: str = "/") -> Iterator[Served]:
    """Serve ``site_dir`` on 127.0.0.1 under ``prefix`` with `oya serve`'s server or the plain one."""
    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    wire = WireLog()
    base = SiteRequestHandler if server == "oya" else _QuietPlain
    handler = type("Handler", (_Metered, base), {"wire": wire, "prefix": prefix})
    if server == "oya":
        httpd = make_server(site_dir, port=0, handler_class=handler)
    elif server == "plain":
        from functools import partial

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(site_dir)))
    else:
        raise ValueError(f"unknown server {server!r} (oya or plain)")
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{httpd.server_address[1]}{prefix}", wire)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def kind_of(path: str) -> str:
    """What a request fetched, for the bytes' breakdown: a shard's kind (``shards:graph``), the
    runtime's parts, the query model, the site's own scripts and styles, or a page."""
    name = path.rsplit("/", 1)[-1]
    if SHARD_PATH in path:
        return "shards:" + name.split("-", 1)[0]
    for part, kind in (
        ("/vendor/pyodide", "pyodide"),
        ("/vendor/brotli", "brotli decoder"),
        ("/vendor/transformers", "transformers+onnxruntime"),
        ("/vendor/mermaid", "mermaid"),
        ("/vendor/", "core wheel"),
        ("/models/", "query model"),
        ("/static/", "static"),
        ("/bundle", "bundle, not a shard"),
    ):
        if part in path:
            return kind
    return "pages"


def _by_kind(transfers: list[Transfer]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in transfers:
        out[kind_of(t.path)] = out.get(kind_of(t.path), 0) + t.bytes
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def summarize(transfers: list[Transfer], first_at: float, full_at: float) -> dict[str, Any]:
    """Bytes and requests answered before the first answer, before the full one, and in the visit.

    "To the first answer" counts the responses the server had finished writing by then: a download
    still running when the first answer showed (the query model, fetched after Pyodide for the full
    answer) was not waited for; it is listed as in flight, with the bytes it had started to send."""
    ok = [t for t in transfers if t.status < 400]
    top = sorted(ok, key=lambda t: -t.bytes)[:8]
    flying = [t for t in transfers if t.at <= first_at < t.done]
    done = sum(t.bytes for t in transfers if t.done <= first_at)
    return {
        "bytes": done,
        "requests": sum(1 for t in transfers if t.done <= first_at),
        "in_flight_at_first_answer": [[t.path, t.bytes, round(first_at - t.at, 2)] for t in flying],
        # an upper bound: the downloads in flight counted whole (their share then is not known here)
        "bytes_with_in_flight": done + sum(t.bytes for t in flying),
        "first_answer_by_kind": _by_kind([t for t in transfers if t.done <= first_at]),
        "bytes_to_full_answer": sum(t.bytes for t in transfers if t.at <= full_at),
        "full_answer_by_kind": _by_kind([t for t in transfers if t.at <= full_at]),
        "bytes_in_visit": sum(t.bytes for t in transfers),
        "requests_in_visit": len(transfers),
        "not_modified": sum(1 for t in transfers if t.status == 304),
        "errors": sorted({f"{t.status} {t.path}" for t in transfers if t.status >= 400}),
        "largest": [[t.path, t.bytes, t.encoding] for t in top],
    }


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def chromium_pss_mb(profile: Path) -> dict[str, float]:
    """PSS of the Chromium started with ``profile`` and of all its descendants (Linux /proc)."""
    parents: dict[int, int] = {}
    roots: list[int] = []
    marker = f"--user-data-dir={profile}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if marker in (entry / "cmdline").read_bytes():
                roots.append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    family = set(roots)
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in family and pid not in family:
                family.add(pid)
                grew = True
    sizes = [_pss_kb(pid) for pid in family]
    return {
        "total_pss_mb": round(sum(sizes) / 1024, 1),
        "largest_process_pss_mb": round(max(sizes, default=0) / 1024, 1),
    }


@contextmanager
def browser(playwright: Any, profile: Path, network: Network | None) -> Iterator[tuple[Any, Any, list[str]]]:
    """A Chromium on ``profile``: (context, page, offsite requests seen), throttled when ``network``.

    Throttled, service workers are blocked: the throttling (CDP, per target) does not reach a
    service worker's fetches, and the site's sw.js would fetch part of the visit unthrottled."""
    offsite: list[str] = []
    ctx = playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=find_chromium(),
        headless=True,
        args=CHROMIUM_ARGS,
        service_workers="block" if network is not None else "allow",
    )
    try:
        ctx.on("request", lambda r: _note_offsite(offsite, r.url))
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        if network is not None:
            cdp.send("Network.emulateNetworkConditions", network.cdp())
        yield ctx, page, offsite
    finally:
        ctx.close()


def _note_offsite(offsite: list[str], url: str) -> None:
    scheme = urlsplit(url).scheme
    if scheme in ("http", "https", "ws", "wss") and urlsplit(url).hostname != "127.0.0.1":
        offsite.append(url)


ANSWER_AT = """sel => {
  const e = document.querySelector(sel);
  return e ? [performance.now(), performance.timeOrigin, e.querySelector('.ask-error')?.textContent || ''] : null;
}"""


def _answer_at(page: Any, selector: str) -> tuple[float, float]:
    """(ms since navigation, epoch seconds) when ``selector`` first matched; an error entry fails."""
    ms, origin, error = page.wait_for_function(ANSWER_AT, arg=selector, polling=20).json_value()
    if error:
        raise RuntimeError(f"the answer is an error: {error}")
    return float(ms), (float(origin) + float(ms)) / 1000


def first_answer(page: Any, url: str, question: str) -> dict[str, Any]:
    """Open ``url?ask=question``; seconds from navigation to the first answer rendered in the panel
    (a partial one while the query model loads counts) and to the full one, and the page's marks."""
    page.goto(f"{url}?ask={quote(question)}", wait_until="commit")
    first_ms, first_at = _answer_at(page, ANSWERED)
    full_ms, full_at = _answer_at(page, ANSWERED + ":not(.ask-partial)")
    marks = page.evaluate(
        "() => performance.getEntriesByType('mark').filter(m => m.name.startsWith('oya:'))"
        ".map(m => [m.name.slice(4), Math.round(m.startTime), m.detail])"
    )
    # bytes count up to the moment the engine handed the first answer over (its first mark), not
    # up to when this poll saw it: the answer shown lets the page's diagrams load Mermaid, which
    # must not count, and within the poll's 20 ms that request reached the server
    handed = page.evaluate(
        "() => { const m = performance.getEntriesByName('oya:first-answer')[0];"
        " return m ? performance.timeOrigin + m.startTime : null; }"
    )
    if handed is not None:
        first_at = min(first_at, float(handed) / 1000)
    return {
        "seconds": round(first_ms / 1000, 2),
        "full_answer_seconds": round(full_ms / 1000, 2),
        "first_was_partial": full_ms > first_ms,
        "marks_ms": {name: at for name, at, _ in marks},
        # what a mark measured besides its time (the worker's Brotli decoding: {ms, bytes} per file)
        "mark_details": {name: detail for name, _, detail in marks if detail is not None},
        "_at": (first_at, full_at),
    }


# One question through the panel, timed in the page: to the answer shown (ask() resolved: the entry is
# in the log), then to its diagram drawn (an svg, or its source shown when drawing failed; checked every
# frame). Only the timings come back: sending the whole result over CDP to Python took ~40 ms more.
_ASK_TIMED = """async (q) => {
  const t0 = performance.now();
  const run = await oyaAsk.ask(q);
  const shown = performance.now() - t0;
  if (run.error) return { error: run.error };
  const settled = () => {
    const last = [...document.querySelectorAll('#ask-panel .ask-entry')].at(-1);
    const holder = last && last.querySelector('.ask-mermaid');
    return !!last && (!holder || !!holder.querySelector('svg, pre'));
  };
  const limit = t0 + 30000;
  while (!settled() && performance.now() < limit) await new Promise((r) => requestAnimationFrame(r));
  return { shown, drawn: performance.now() - t0, timings: run.result.browser_timings_ms };
}"""


def ask_each(page: Any, questions: list[str], wire: WireLog | None = None) -> dict[str, Any]:
    """Every question through the panel (test hooks), one after the other as a reader asks them: the
    next question waits until the previous answer's diagram is drawn (Mermaid renders on the page's
    thread after the answer is shown; asked back to back, one answer's drawing slows the next
    answer). Ms to the answer shown, to its diagram drawn, and the engine's own ms, p50/p95; with
    the server's ``wire``, the bytes each question made the page fetch (all, and shards)."""
    load_test_hooks(page)
    wall, drawn, engine = [], [], []
    fetched: list[list[int]] = []  # per question: bytes, shard bytes, requests
    parts: dict[str, list[float]] = {k: [] for k in ("embed", "vectors", "python", "shards", "rounds")}
    for q in questions:
        if wire is not None:
            wire.take()  # what the page fetched before this question (its hooks, a diagram's parts)
        run = page.evaluate(_ASK_TIMED, q)
        if wire is not None:
            got = wire.take()
            shards = sum(t.bytes for t in got if SHARD_PATH in t.path)
            fetched.append([sum(t.bytes for t in got), shards, len(got)])
        if run.get("error"):
            raise RuntimeError(f"question {q!r} failed: {run['error']}")
        wall.append(float(run["shown"]))
        drawn.append(float(run["drawn"]))
        timings = run["timings"]
        engine.append(float(timings["query"]))
        for key, values in parts.items():
            values.append(float(timings.get(key, 0.0)))

    def stats(xs: list[float]) -> dict[str, float]:
        return {
            "p50": round(percentile(xs, 50), 1),
            "p95": round(percentile(xs, 95), 1),
            "max": round(max(xs), 1),
        }

    out: dict[str, Any] = {}
    if fetched:
        out["fetched"] = {
            "bytes": stats([float(b) for b, _, _ in fetched]),
            "shard_bytes": stats([float(s) for _, s, _ in fetched]),
            "requests": stats([float(n) for _, _, n in fetched]),
            "per_question": fetched,
        }
    return {
        **out,
        "n": len(questions),
        "panel_ms": stats(wall),  # asked -> the answer shown in the panel
        "diagram_ms": stats(drawn),  # asked -> its diagram drawn too
        "engine_ms": stats(engine),
        "engine_parts_ms": {
            k: stats(v) for k, v in parts.items()
        },  # embed, JS vectors, the core, fetching shards (ms) and its rounds (a count)
    }


def warm_line(w: dict[str, Any]) -> str:
    """One line for ``ask_each``'s result (every bench prints it the same way)."""

    def cell(name: str, key: str) -> str:
        return f"{name} p50 {w[key]['p50']} p95 {w[key]['p95']} ms" if key in w else f"{name} not measured"

    parts = "; ".join(
        cell(n, k)
        for n, k in (("engine", "engine_ms"), ("panel", "panel_ms"), ("with its diagram", "diagram_ms"))
    )
    return f"warm questions ({w['n']}): {parts}"


def memory(page: Any, ctx: Any, profile: Path) -> dict[str, Any]:
    heap = ctx.new_cdp_session(page).send("Runtime.getHeapUsage")
    return {"page_js_heap_mb": round(heap["usedSize"] / 1e6, 1), **chromium_pss_mb(profile)}


def measure(
    site_dir: Path,
    questions: list[str],
    *,
    page: str = "index.html",
    server: str = "oya",
    prefix: str = "/",
    network: Network | None = Network(),
    cold_runs: int = 1,
) -> dict[str, Any]:
    """Cold (fresh profile, ``cold_runs`` times, median kept) and warm (same profile again) first answers
    to ``questions[0]``, then every question on the warm page. Returns bytes, seconds, latency, memory."""
    from playwright.sync_api import sync_playwright

    if find_chromium() is None:
        raise RuntimeError("no Chromium found (see oya.system_deps.missing_chromium_message)")
    work = Path(tempfile.mkdtemp(prefix="oya-harness-"))
    out: dict[str, Any] = {"site": str(site_dir), "page": page, "server": server, "prefix": prefix}
    out["network"] = asdict(network) if network else None
    out["loadavg_before"] = load_avg()
    try:
        with serve(Path(site_dir), server, prefix) as served, sync_playwright() as p:
            url = served.url + page
            colds = []
            for _ in range(max(1, cold_runs)):
                shutil.rmtree(work / "profile", ignore_errors=True)
                served.wire.take()
                with browser(p, work / "profile", network) as (_ctx, pg, offsite):
                    run = first_answer(pg, url, questions[0])
                    time.sleep(1)  # let requests still in flight finish: the visit's total
                colds.append({**run, **summarize(served.wire.take(), *run.pop("_at")), "offsite": offsite})
            colds.sort(key=lambda r: r["seconds"])
            out["cold"] = {**colds[len(colds) // 2], "runs_s": [r["seconds"] for r in colds]}
            with browser(p, work / "profile", network) as (ctx, pg, offsite):
                run = first_answer(pg, url, questions[0])
                out["warm"] = {**run, **summarize(served.wire.take(), *run.pop("_at")), "offsite": offsite}
                if len(questions) > 1:
                    out["warm_questions"] = ask_each(pg, questions[1:], served.wire)
                out["memory"] = memory(pg, ctx, work / "profile")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["loadavg_after"] = load_avg()
    return out


def print_table(result: dict[str, Any]) -> None:
    net = result["network"]
    shown = f"{net['down_mbit']:g} Mbit/s, {net['rtt_ms']:g} ms RTT" if net else "unthrottled"
    print(f"{result['site']} ({result['server']} server, prefix {result['prefix']}, {shown})")
    print(
        f"{'visit':<6}{'MB to 1st answer':>17}{'requests':>10}{'s to 1st answer':>16}"
        f"{'MB to full':>11}{'s to full':>10}{'MB in visit':>12}"
    )
    for visit in ("cold", "warm"):
        r = result[visit]
        print(
            f"{visit:<6}{r['bytes'] / 1e6:>17.2f}{r['requests']:>10}{r['seconds']:>16.2f}"
            f"{r['bytes_to_full_answer'] / 1e6:>11.2f}{r['full_answer_seconds']:>10.2f}{r['bytes_in_visit'] / 1e6:>12.2f}"
        )
    if "warm_questions" in result:
        print(warm_line(result["warm_questions"]))
    print(
        f"memory: {result['memory']}; load average before/after {result['loadavg_before']} / {result['loadavg_after']}"
    )
    for visit in ("cold", "warm"):
        if result[visit]["errors"] or result[visit]["offsite"]:
            print(f"{visit}: errors {result[visit]['errors']} offsite {result[visit]['offsite']}")


def read_questions(args: argparse.Namespace) -> list[str]:
    questions = list(args.question or [])
    if args.questions:
        lines = Path(args.questions).read_text(encoding="utf-8").splitlines()
        questions += [q.strip() for q in lines if q.strip() and not q.startswith("#")]
    if not questions:
        raise SystemExit("browser_harness: give questions with -q/--question or --questions FILE")
    return questions[: args.n + 1] if args.n else questions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", required=True, type=Path, help="a built site folder")
    ap.add_argument(
        "-q", "--question", action="append", help="a question (repeatable; the first is the first answer)"
    )
    ap.add_argument("--questions", help="a file of questions, one a line (# comments)")
    ap.add_argument("-n", type=int, default=0, help="ask at most N warm questions after the first")
    ap.add_argument("--page", default="index.html", help="the page to open, relative to the site root")
    ap.add_argument("--server", choices=["oya", "plain"], default="oya")
    ap.add_argument("--prefix", default="/", help="serve under this sub-path, e.g. /team/wiki/")
    ap.add_argument("--down-mbit", type=float, default=20.0)
    ap.add_argument("--rtt-ms", type=float, default=40.0)
    ap.add_argument("--no-throttle", action="store_true")
    ap.add_argument("--cold-runs", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the result here")
    args = ap.parse_args(argv)
    network = None if args.no_throttle else Network(args.down_mbit, args.rtt_ms)
    result = measure(
        args.site,
        read_questions(args),
        page=args.page,
        server=args.server,
        prefix=args.prefix,
        network=network,
        cold_runs=args.cold_runs,
    )
    if args.json:
        write_json(args.json, result)
    print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
