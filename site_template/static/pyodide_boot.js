// Boot Pyodide from the site's own folder and install the oya core wheel into it.
//
// Everything comes from the site: Pyodide from `runtime` (default vendor/pyodide/; a built site names
// its content-hashed folder in manifest.json), no CDN. The lock file stub keeps Pyodide
// from fetching pyodide-lock.json (we load no Pyodide packages by name, only our own wheel); its
// info must match the runtime's ABI, so update it together with the pinned npm `pyodide` version.
// Loading by name offline "succeeds" and then the import fails, so the wheel is fetched with a
// checked response, unpacked into site-packages, and `oya.core` is imported right away to verify it.
// Pyodide fetches its WASM and standard library itself, with the global fetch, and has no option to be
// handed their bytes (only stdLibURL, another URL): while it loads, this scope's fetch answers those
// two URLs through ask/decoded.js, so a plain static host sends their gzip copies (`copies`, from the
// page: "gz" or "raw"). Its JavaScript, pyodide.asm.mjs (1.25 MB, 0.26 MB gzipped), Pyodide imports as
// a module, which no fetch can answer: on a plain host the worker inflates the .gz copy, imports it from
// a blob: URL and hands the module's factory to loadPyodide (its createPyodideModule option), which
// then imports nothing; the module finds its WASM through Pyodide's locateFile (indexURL), not its own
// URL. Where that import is refused (a host whose CSP for scripts leaves out blob:) or the copy fails,
// Pyodide imports the file itself, as on any host: slower, never broken.
// On a plain host given the site's Brotli decoder (`brotli`: its folder, ask/brotli.js), the three
// come as their .br copies (~1.2 MB less than .gz) decoded as they stream in; the decoder loads while
// pyodide.mjs does, and if it cannot the .gz copies come instead. Each decoded file leaves a mark,
// "brotli <name>", whose detail holds the ms spent decoding it ({ms, bytes}).

import { brotliStream, loadBrotli } from "./ask/brotli.js";
import { decodingFetch, fetchDecoded } from "./ask/decoded.js";
import { absoluteBase as absolute, mark } from "./ask/util.js";

const LOCK_FILE_STUB = JSON.stringify({
  info: { abi_version: "2026_0", arch: "wasm32", platform: "emscripten_5_0_3", python: "3.14.2", version: "314.0.7" },
  packages: {},
});

// The site-packages folder on sys.path (Python, an expression): where the wheel is unpacked.
const SITE_PACKAGES = "next(p for p in __import__('sys').path if p.endswith('/site-packages'))";

async function fetchBytes(url, what) {
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new Error(`Could not fetch the ${what} at ${url}: ${err.message}`);
  }
  if (!response.ok) {
    throw new Error(`Could not fetch the ${what} at ${url}: HTTP ${response.status} ${response.statusText}`);
  }
  return await response.arrayBuffer();
}

// The files Pyodide fetches itself that are worth fetching compressed (MBs each; pyodide.asm.mjs,
// which it imports, is decodedModuleFactory's).
const DECODED_FILES = ["pyodide.asm.wasm", "python_stdlib.zip"];

// A promise of `(url) => TransformStream` decoding Brotli (ask/decoded.js's `brotli`), or of null when
// the decoder in `folderUrl` does not load: it is fetched the way the runtime is (copies "gz").
function brotliDecoder(folderUrl) {
  return loadBrotli(folderUrl, { fetchWasm: (url) => fetchDecoded(url, { copies: "gz" }) }).then(
    (decoder) => {
      mark("brotli-ready");
      return (url) => {
        const name = new URL(url).pathname.split("/").at(-1);
        return brotliStream(decoder, { onDone: (ms, bytes) => mark(`brotli ${name}`, { detail: { ms: Math.round(ms), bytes } }) });
      };
    },
    () => null,
  );
}

// Pyodide's module factory, imported from pyodide.asm.mjs's compressed copy decoded, else from the file.
async function decodedModuleFactory(indexURL, brotli) {
  const url = new URL("pyodide.asm.mjs", indexURL).href;
  let blobUrl = null;
  try {
    const response = await fetchDecoded(url, { copies: "gz", brotli });
    if (response.ok) {
      blobUrl = URL.createObjectURL(new Blob([await response.arrayBuffer()], { type: "text/javascript" }));
      const factory = (await import(blobUrl)).default;
      if (typeof factory === "function") return factory;
    }
  } catch {
    // refused or failed: the file itself, below
  } finally {
    if (blobUrl) URL.revokeObjectURL(blobUrl);
  }
  return (await import(url)).default;
}

// loadPyodide(options) with this scope's fetch answering DECODED_FILES under indexURL decoded, and on a
// plain host ("gz") pyodide.asm.mjs from its copy. loadPyodide starts fetching the WASM before it
// awaits the factory (pyodide.mjs: `await loadWasmScript(config)` returns config.createPyodideModule),
// so the factory goes in as a promise and the copy downloads beside the WASM, not before it.
async function loadPyodideDecoded(loadPyodide, options, copies, brotli) {
  const original = globalThis.fetch;
  const urls = DECODED_FILES.map((name) => new URL(name, options.indexURL).href);
  globalThis.fetch = decodingFetch(urls, { copies, fetchFn: original.bind(globalThis), brotli });
  try {
    if (copies !== "gz") return await loadPyodide(options);
    return await loadPyodide({ ...options, createPyodideModule: decodedModuleFactory(options.indexURL, brotli) });
  } finally {
    globalThis.fetch = original;
  }
}

// Returns the Pyodide instance with `oya.core` importable. `runtime`: Pyodide's folder, relative to base;
// copies: how to fetch its large files (ask/decoded.js copiesFor); brotli: the Brotli decoder's folder,
// relative to base (null: none; used only when copies is "gz"). The bundle is the worker's to load
// (pyodide_worker.js opens its shards with oya.core.shards.open_shards).
export async function bootCore(baseUrl, { wheelUrl, runtime = "vendor/pyodide/", copies = "raw", brotli = null } = {}) {
  if (!wheelUrl) {
    throw new Error("bootCore needs wheelUrl (the oya core wheel)");
  }
  const base = absolute(baseUrl);
  const indexURL = new URL(runtime, base).href;
  const decoder = copies === "gz" && brotli ? brotliDecoder(new URL(brotli, base).href) : null;
  let loadPyodide;
  mark("pyodide-import-start");
  try {
    ({ loadPyodide } = await import(indexURL + "pyodide.mjs"));
    mark("pyodide-module");
  } catch (err) {
    throw new Error(`Could not load Pyodide from ${indexURL}: ${err.message}`);
  }
  const wheelHref = new URL(wheelUrl, base).href;
  const [pyodide, wheel] = await Promise.all([
    loadPyodideDecoded(loadPyodide, { indexURL, lockFileContents: LOCK_FILE_STUB, packageBaseUrl: indexURL }, copies, decoder).then((py) => {
      mark("pyodide-loaded");
      return py;
    }),
    fetchBytes(wheelHref, "oya core wheel").then((bytes) => {
      mark("wheel-fetched");
      return bytes;
    }),
  ]);
  // site-packages as sys.path names it, and only its finder's cache dropped: sysconfig and
  // importlib.invalidate_caches() would import sysconfig's data and importlib.metadata (~175 kB the
  // site's trimmed standard library then need not ship, oya/site/stdlib_trim.py) for nothing else
  const purelib = pyodide.runPython(SITE_PACKAGES);
  pyodide.unpackArchive(wheel, "wheel", { extractDir: purelib });
  try {
    pyodide.runPython(`import sys
sys.path_importer_cache.pop(${SITE_PACKAGES}, None)
import oya.core`);
    mark("core-imported");
  } catch (err) {
    throw new Error(`The oya core wheel from ${wheelHref} installed but 'import oya.core' failed: ${err.message}`);
  }
  return pyodide;
}
