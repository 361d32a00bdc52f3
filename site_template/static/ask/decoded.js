// The runtime's large files (Pyodide's WASM and standard library, onnxruntime's WASM, the query model)
// fetched compressed from any host, also one that sends files as they are.
//
// Theory of operation: the build writes <file>.gz (and .br) beside every compressible file
// (oya/site/assets.py). `oya serve` and hosts that honour precompressed files send the .br copy with
// Content-Encoding, and the browser decodes it; a plain static server (python -m http.server, a
// bucket) sends the 9.6 MB WASM as it is. Browsers inflate gzip natively (DecompressionStream), not
// Brotli, so a page on a plain host fetches <file>.gz and inflates it here.
// * Which way (copiesFor): the page reads manifest.json's Content-Encoding (the build writes its .br
//   and .gz copies whatever its size, so it is the signal). A host that sent Brotli or zstd sends the
//   runtime that way too and smaller than gzip: "raw", fetch the file's own URL. Anything else (none,
//   or gzip: a host that gzips on the fly may not do it for WASM): "gz", fetch the copy. The service
//   worker keeps whichever URL was fetched, and offline answers manifest.json with the headers it was
//   kept with, so the same way is taken offline and finds the same URLs in its cache.
// * What came (decodedBody): the copy's first bytes decide, never its name: gzip's magic 1f 8b
//   is inflated; anything else already was (a host that labels .gz files Content-Encoding: gzip).
//   None of the files fetched this way is itself gzip (.gz files get no copies), so the sniff
//   cannot mistake one.
// * A copy the host lacks (404) falls back to the file's own URL: slower, never broken.
// * Brotli (`brotli`, ask/brotli.js): given a decoder, a "gz" fetch asks for the .br copy instead
//   (~25% smaller than gzip on the runtime) and decodes it as it streams in. The .br request starts
//   at once, beside the decoder's own load; a decoder that fails to load (resolves null or rejects)
//   cancels it and takes the .gz path above, as does a .br copy the host lacks (404): slower, never
//   broken. A host that labels .br files Content-Encoding: br has had the browser decode them
//   already: that header, readable on same-origin answers, passes the body through as it came.
// The body streams through the inflater, so WebAssembly.instantiateStreaming compiles while it
// downloads; the answer carries the file's own Content-Type (instantiateStreaming requires
// application/wasm). Pure apart from the injected fetch (tests/js/decoded.test.js).

const GZIP_MAGIC = [0x1f, 0x8b];
const BETTER_THAN_GZIP = new Set(["br", "zstd"]);
const TYPES = { wasm: "application/wasm", json: "application/json", zip: "application/zip" };

// "raw" or "gz": how to fetch the large files from a host whose manifest.json came with this
// Content-Encoding (null or "" when none).
export function copiesFor(contentEncoding) {
  const codings = String(contentEncoding || "")
    .toLowerCase()
    .split(",")
    .map((c) => c.trim());
  return codings.some((c) => BETTER_THAN_GZIP.has(c)) ? "raw" : "gz";
}

function contentType(url) {
  const ext = new URL(url).pathname.split(".").at(-1);
  return TYPES[ext] || "application/octet-stream";
}

// A stream of `chunks` (already read) followed by the rest of `reader`.
function prepended(chunks, reader) {
  return new ReadableStream({
    pull: async (controller) => {
      if (chunks.length) return controller.enqueue(chunks.shift());
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

// A response's body as a stream of the file's bytes: inflated when it starts with gzip's magic.
async function decodedBody(response) {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const head = []; // the chunks read to see the first bytes, sent on first
  const first = [];
  while (first.length < GZIP_MAGIC.length) {
    const { done, value } = await reader.read();
    if (done) break;
    head.push(value);
    first.push(...value.subarray(0, GZIP_MAGIC.length - first.length));
  }
  const body = prepended(head, reader);
  const gzipped = GZIP_MAGIC.every((byte, i) => first[i] === byte);
  return gzipped ? body.pipeThrough(new DecompressionStream("gzip")) : body;
}

function fileResponse(url, body) {
  return new Response(body, { status: 200, headers: { "Content-Type": contentType(url) } });
}

// The .br copy of `url` decoded by `brotli` (a promise of `(url) => TransformStream`, or of null when
// there is no decoder); null when that way is closed (no decoder, no copy), for the .gz way to follow.
async function brotliDecoded(url, brotli, fetchFn) {
  const pending = fetchFn(url + ".br");
  let decoder = null;
  try {
    decoder = await brotli;
  } catch {
    decoder = null;
  }
  if (!decoder) {
    pending.then((r) => r.body?.cancel(), () => {}); // the download is not wanted
    return null;
  }
  const copy = await pending;
  if (copy.status === 404) return null;
  if (!copy.ok || !copy.body) return copy;
  const labelled = /\bbr\b/i.test(copy.headers.get("Content-Encoding") || "");
  return fileResponse(url, labelled ? copy.body : copy.body.pipeThrough(decoder(url)));
}

// The file at `url` (absolute) as a Response of its own bytes and type: when copies is "gz", its .br
// copy decoded (given a `brotli` decoder) or else its .gz copy inflated; the URL itself when "raw".
// An error status is returned as it came, for the caller to report as it reports any failed fetch.
export async function fetchDecoded(url, { copies = "gz", fetchFn = (u) => fetch(u), brotli = null } = {}) {
  if (copies !== "gz") return await fetchFn(url);
  if (brotli) {
    const decoded = await brotliDecoded(url, brotli, fetchFn);
    if (decoded) return decoded;
  }
  const copy = await fetchFn(url + ".gz");
  if (copy.status === 404) return await fetchFn(url);
  if (!copy.ok) return copy;
  return fileResponse(url, await decodedBody(copy));
}

// A request a library makes that may be answered decoded: a GET of the whole file, with no
// integrity to check on the bytes as sent (headers such as a user agent do not matter to a static host).
function plainGet(init) {
  if (!init) return true;
  if ((init.method && String(init.method).toUpperCase() !== "GET") || init.integrity) return false;
  return !new Headers(init.headers || {}).has("range");
}

// A fetch that answers the URLs in `decoded` (absolute) with fetchDecoded and everything else with
// `fetchFn`: for a library that fetches its files itself with no option to be handed their bytes
// (Pyodide's global fetch, transformers.js's env.fetch). A URL given as a path is resolved against
// `base`; any other request (a range, a POST, a Request object) passes through as it came. `brotli`:
// as fetchDecoded's.
export function decodingFetch(decoded, { copies, fetchFn, brotli = null, base = globalThis.location?.href }) {
  const urls = new Set(decoded);
  return (input, init) => {
    const given = typeof input === "string" ? input : input instanceof URL ? input.href : null;
    let url = null;
    try {
      url = given === null ? null : new URL(given, base).href;
    } catch {
      url = null;
    }
    if (url !== null && urls.has(url) && plainGet(init)) return fetchDecoded(url, { copies, fetchFn, brotli });
    return fetchFn(input, init);
  };
}
