"""``oya serve``: security headers, no folder listings, only its own Host names answered, and a
4xx, never a traceback, for a request path that can name no file.

A page from any web site can make a browser request http://127.0.0.1:PORT/, and with DNS
rebinding read the answer as same-origin: the request then carries the attacker's domain as its
Host, which the server must refuse. Requests go through http.client so the Host can be forged.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from oya.site.csp import CSP
from oya.site.serve import PAGE_CSP, SECURITY_HEADERS, SiteRequestHandler, host_allowed, make_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    site = tmp_path_factory.mktemp("site")
    (site / "index.html").write_text("<!doctype html><title>private wiki</title>", encoding="utf-8")
    (site / "files").mkdir()
    (site / "files" / "a.py.html").write_text("<p>secret design</p>", encoding="utf-8")
    (site / "bundle").mkdir()
    (site / "bundle" / "index.json").write_text("{}", encoding="utf-8")
    httpd = make_server(site, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def get(port: int, path: str, host: str | None = None, method: str = "GET") -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.putrequest(method, path, skip_host=True)
    if host is not None:
        conn.putheader("Host", host)
    conn.endheaders()
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LocalHost", "[::1]"])
def test_own_names_are_served_with_security_headers(server: int, name: str) -> None:
    page = get(server, "/files/a.py.html", f"{name}:{server}")
    assert page.status == 200
    for header, value in SECURITY_HEADERS.items():
        assert page.headers[header] == value
    assert page.headers["Content-Security-Policy"] == PAGE_CSP
    assert PAGE_CSP.startswith(CSP) and "frame-ancestors 'none'" in PAGE_CSP
    data = get(server, "/bundle/index.json", f"{name}:{server}")
    assert data.status == 200 and data.headers["X-Content-Type-Options"] == "nosniff"
    assert data.headers["Content-Security-Policy"] is None  # a policy is for documents


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",  # DNS rebinding: the attacker's name, re-pointed at 127.0.0.1
        "evil.example:{port}",
        "127.0.0.1.evil.example:{port}",
        "localhost.evil.example:{port}",
        "127.0.0.1:1",  # the right name, another port
        "localhost",  # port 80 implied
        "10.0.0.1:{port}",  # another address
        None,  # no Host at all
    ],
)
def test_other_host_names_are_refused(server: int, host: str | None) -> None:
    for method in ("GET", "HEAD"):
        response = get(server, "/files/a.py.html", None if host is None else host.format(port=server), method)
        assert response.status == 421
        assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_folders_are_not_listed(server: int) -> None:
    host = f"127.0.0.1:{server}"
    assert get(server, "/files/", host).status == 404
    assert get(server, "/bundle/", host).status == 404
    assert get(server, "/files", host).status in (301, 404)  # the redirect to files/, which is 404
    assert get(server, "/", host).status == 200  # a folder with index.html is its page


def test_host_allowed_for_wildcard_and_ipv6_binds() -> None:
    assert host_allowed("192.168.1.5:8000", ("0.0.0.0", 8000))  # an IP literal cannot be rebound
    assert not host_allowed("evil.example:8000", ("0.0.0.0", 8000))
    assert host_allowed("[::1]:8000", ("::1", 8000, 0, 0))
    assert host_allowed("192.168.1.5:8000", ("192.168.1.5", 8000))
    assert not host_allowed("192.168.1.6:8000", ("192.168.1.5", 8000))
    assert not host_allowed("localhost:notaport", ("127.0.0.1", 8000))
    assert not host_allowed("", ("127.0.0.1", 8000))


def test_serve_on_ipv6_loopback(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>v6</title>", encoding="utf-8")
    try:
        httpd = make_server(tmp_path, "::1", 0)
    except Exception as exc:  # a machine without IPv6 cannot run this one check
        pytest.skip(f"no IPv6 loopback here: {exc}")
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        port = int(httpd.server_address[1])
        conn = http.client.HTTPConnection("::1", port, timeout=5)
        conn.request("GET", "/")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _leave_mid_download(httpd: Any, port: int) -> None:
    """Ask for the big file, read a little, and hang up abruptly (RST), as a reader who follows a
    link while the model is still arriving; returns when the server has handled the request."""
    httpd.daemon_threads = False  # so server_close joins the request's thread (the default does not)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(f"GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert sock.recv(1024).startswith(b"HTTP/1.0 200")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    finally:
        httpd.shutdown()
        httpd.server_close()  # joins the request's thread, so its error has been handled
        thread.join(timeout=5)


def test_a_reader_leaving_mid_download_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>big</title>", encoding="utf-8")
    (tmp_path / "big.bin").write_bytes(b"\0" * (32 << 20))  # more than the sockets' buffers hold
    httpd = make_server(tmp_path, "127.0.0.1", 0)
    _leave_mid_download(httpd, int(httpd.server_address[1]))
    assert "Traceback" not in capsys.readouterr().err

    # the standard server prints a traceback for the same thing: the check above can fail
    plain = ThreadingHTTPServer(("127.0.0.1", 0), partial(SiteRequestHandler, directory=str(tmp_path)))
    _leave_mid_download(plain, int(plain.server_address[1]))
    err = capsys.readouterr().err
    assert "Traceback" in err and ("BrokenPipeError" in err or "ConnectionResetError" in err)


# -- malformed request paths, against a real `oya serve` -------------------------------------------

# raw request targets (bytes on the wire) that can name no file, and the status each must get
MALFORMED = [
    (b"/%00", 400),
    (b"/index.html%00", 400),
    (b"/files/%00/a.py.html", 400),
    (b"/%zz", 400),
    (b"/%", 400),
    (b"/index.html%2", 400),
    (b"/%ff%fe", 400),  # not UTF-8
    (b"/%ed%a0%80", 400),  # an encoded surrogate: the standard handler raised on it
    (b"/..%2f..%2fetc%2fpasswd", 400),
    (b"/%2e%2e/%2e%2e/etc/passwd", 400),
    (b"/files/../index.html", 400),
    (b"/files\\..\\index.html", 400),
    (b"/\x00", 400),
    (b"/a\x01b", 400),
    (b"/\x80\xff", 400),
    (b"http://127.0.0.1/%00", 400),
    (b"/" + b"a" * 5000, 414),
    (b"/" + b"%41" * 4100, 414),
    (b"/" + b"b" * 300 + b".html", 404),  # one name over 255 bytes: no such file
    (b"/nothing.html", 404),
]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="module")
def oya_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """`python -m oya serve SITE --port 0` in its own process, its stderr kept for the test."""
    site = tmp_path_factory.mktemp("served")
    (site / "index.html").write_text("<!doctype html><title>wiki</title>", encoding="utf-8")
    (site / "files").mkdir()
    (site / "files" / "back\\slash.py.html").write_text("<p>legal on POSIX</p>", encoding="utf-8")
    (site / "files" / "tab\tname.py.html").write_text("<p>so is a tab</p>", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("OYA_DEBUG", None)
    env["PYTHONFAULTHANDLER"] = "1"  # a server that hangs says where
    proc = subprocess.Popen(
        [sys.executable, "-m", "oya", "serve", str(site), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Ctrl+C as a terminal sends it: a process started with SIGINT ignored keeps it ignored
        # (POSIX), and this one is started by a test run that may have inherited or set that
        preexec_fn=_default_sigint,
    )
    assert proc.stderr is not None
    seen = ""
    while (match := re.search(r"http://127\.0\.0\.1:(\d+)/", seen)) is None:
        line = proc.stderr.readline()
        assert line, f"oya serve exited: {seen}"
        seen += line
    try:
        yield int(match.group(1)), proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def _raw_status(port: int, target: bytes) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % port
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data, f"no answer at all to {target[:60]!r}"
    return int(data.split(b" ", 2)[1])


def test_malformed_paths_get_a_4xx_and_never_a_traceback(
    oya_serve: tuple[int, subprocess.Popen[str]],
) -> None:
    port, proc = oya_serve
    got = {target[:60]: _raw_status(port, target) for target, _ in MALFORMED}
    assert got == {target[:60]: status for target, status in MALFORMED}
    # legal names the site can hold (a page is named after its repository file) are still served
    assert _raw_status(port, b"/files/back%5Cslash.py.html") == 200
    assert _raw_status(port, b"/files/tab%09name.py.html") == 200
    assert _raw_status(port, b"/?q=%00") == 200  # the query is not a path
    assert proc.poll() is None  # still serving
    proc.send_signal(signal.SIGINT)  # Ctrl+C: the server stops cleanly
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler (PYTHONFAULTHANDLER) prints every thread's stack
        _, stuck = proc.communicate(timeout=10)
        pytest.fail(f"oya serve did not stop 30 s after Ctrl+C; its threads:\n{stuck[-6000:]}")
    assert rc == 0
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert "Traceback" not in err and "failed" not in err, err
