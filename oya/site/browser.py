"""How Oya's tests and benchmarks start Chromium: headless and off the network.

One definition for both, so a flag added for one (Chromium keeps finding new hosts to call)
reaches the other.
"""

CHROMIUM = "/usr/bin/chromium"  # Debian's package; never a browser downloaded by a test tool
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
