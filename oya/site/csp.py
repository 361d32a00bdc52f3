"""The Content-Security-Policy every wiki page carries (as a <meta> tag).

Nothing may load from outside the site: every source is 'self'. Pyodide and
onnxruntime-web compile WebAssembly ('wasm-unsafe-eval'); Mermaid sets inline styles on
the SVG it draws ('unsafe-inline' for styles only). No inline scripts are allowed.
connect-src is left to fall back on default-src 'self' (same effect, 19 bytes less a page).
"""

CSP = (
    "default-src 'self'; "
    "script-src 'self' 'wasm-unsafe-eval'; "
    "style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; "
    "font-src 'self' data:; "
    "worker-src 'self' blob:; "
    "object-src 'none'; "
    "base-uri 'none'; "
    "form-action 'self'"
)
