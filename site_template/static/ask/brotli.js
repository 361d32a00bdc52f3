// A Brotli decoder for the runtime's .br copies on a host that sends files as they are.
//
// Theory of operation: browsers decode Brotli only as a Content-Encoding (DecompressionStream has
// gzip and deflate, not brotli, in Chromium 156), so a plain host's page fetched the runtime's .gz
// copies (ask/decoded.js). The .br copies are ~1.2 MB smaller for Pyodide alone (its WASM 2.77 MB
// against 3.53, the standard library 1.07 against 1.48, pyodide.asm.mjs 0.21 against 0.26), more than
// the decoder costs: brotli-dec-wasm (npm; Rust's brotli-decompressor built for WASM, 208 kB, its .gz
// copy 99 kB) in the site's vendor/brotli.<hash>/ folder.
// * Loading (loadBrotli): the decoder's JavaScript is imported and its WASM fetched through
//   fetchDecoded (the .gz copy inflated natively), once per worker; its failure (a host that lacks
//   the folder, a refused import) is the caller's signal to fetch .gz copies as before.
// * Decoding (brotliStream): a TransformStream fed chunk by chunk as they arrive, so the decoding
//   overlaps the download and WebAssembly.instantiateStreaming still compiles while it comes. Each
//   call to the decoder hands out at most OUT_CHUNK bytes; it asks again while it needs more room.
//   A stream that ends before Brotli's last block is an error, not a short file.
// * Cost: the ms spent inside the decoder are summed per stream and handed to `onDone(ms, bytes)`
//   (pyodide_boot.js marks them): ~100 ms for the 9.6 MB WASM in V8, spread over its download.

const OUT_CHUNK = 1 << 20;
const NEEDS_MORE_OUTPUT = 3; // brotli-dec-wasm's BrotliStreamResultCode
const SUCCESS = 1;

// The decoder module (brotli-dec-wasm's web build) from `folderUrl` (absolute, ending in "/"),
// its WASM fetched with `fetchWasm(url)` (a Response, e.g. fetchDecoded's). Rejects when it cannot load.
export async function loadBrotli(folderUrl, { fetchWasm = (url) => fetch(url), importModule = (url) => import(url) } = {}) {
  const module = await importModule(new URL("brotli_dec_wasm.js", folderUrl).href);
  const wasm = await fetchWasm(new URL("brotli_dec_wasm_bg.wasm", folderUrl).href);
  if (!wasm.ok) throw new Error(`the Brotli decoder's WASM: HTTP ${wasm.status}`);
  await module.default({ module_or_path: wasm });
  return module;
}

// A TransformStream of Brotli-compressed bytes into the bytes they encode, with `decoder` the loaded
// module (loadBrotli); onDone(ms inside the decoder, bytes out) once the stream ends.
export function brotliStream(decoder, { onDone = () => {} } = {}) {
  const state = new decoder.BrotliDecStream();
  let ms = 0;
  let out = 0;
  let finished = false;
  const push = (input, controller) => {
    let rest = input;
    for (;;) {
      const t0 = performance.now();
      const result = state.dec(rest, OUT_CHUNK);
      ms += performance.now() - t0;
      const { buf, code, input_offset: used } = result;
      result.free();
      if (buf.length) {
        out += buf.length;
        controller.enqueue(buf);
      }
      rest = rest.subarray(used);
      if (code === SUCCESS) finished = true;
      if (code !== NEEDS_MORE_OUTPUT) return;
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      if (finished) throw new Error("Brotli stream: bytes after its end");
      push(chunk, controller);
    },
    flush(controller) {
      if (!finished) push(new Uint8Array(0), controller);
      state.free();
      if (!finished) throw new Error("Brotli stream: truncated");
      onDone(ms, out);
    },
  });
}
