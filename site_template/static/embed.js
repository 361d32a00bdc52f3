// The question's embedding, computed in the browser from the site's own files.
//
// all-MiniLM-L6-v2 exported to ONNX (int8, see oya/model_export.py) and run by transformers.js
// on onnxruntime-web's WASM backend. Nothing is fetched from a hub or a CDN: remote models are off,
// the model and the WASM are read from the site (their folders, content-hashed in a built site, come
// from manifest.json; the defaults are the unhashed names). Vectors are the
// mean of the token states over the attention mask, L2-normalised, as sentence-transformers makes
// them in the pipeline, so the browser only needs dot products against the bundle's unit vectors.
// On a host that sends files as they are (copies "gz", ask/decoded.js) the model, its tokenizer and
// onnxruntime's WASM come as their gzip copies, inflated here: transformers.js fetches through
// env.fetch, and onnxruntime takes the WASM's bytes (env.backends.onnx.wasm.wasmBinary) instead of
// fetching it from wasmPaths.

import { decodingFetch, fetchDecoded } from "./ask/decoded.js";
import { absoluteBase as absolute, mark } from "./ask/util.js";

const MODEL = "models/all-MiniLM-L6-v2";
// the model's files worth fetching compressed, under its folder (MBs; the rest are a few hundred bytes)
const DECODED_MODEL_FILES = ["onnx/model_quantized.onnx", "tokenizer.json"];

let extractorPromise = null;

// Load transformers.js and the model once; later calls return the same promise. vendor: the folder of
// transformers.js and onnxruntime's WASM; model: the model's folder (both relative to baseUrl); copies:
// how to fetch their large files (ask/decoded.js copiesFor).
export function loadEmbedder(baseUrl, { vendor = "vendor/transformers/", model = MODEL, copies = "raw" } = {}) {
  if (extractorPromise === null) {
    extractorPromise = createExtractor(absolute(baseUrl), vendor, model, copies).catch((err) => {
      extractorPromise = null; // let a later call retry instead of caching the failure
      throw err;
    });
  }
  return extractorPromise;
}

async function createExtractor(base, vendorPath, modelPath, copies) {
  const vendor = new URL(vendorPath, base).href;
  const modelUrl = new URL(modelPath.replace(/\/?$/, "/"), base);
  const modelName = modelUrl.pathname.split("/").at(-2); // transformers.js reads <localModelPath><name>/
  let transformers;
  mark("transformers-import-start");
  try {
    transformers = await import(vendor + "transformers.min.js");
    mark("transformers-module");
  } catch (err) {
    throw new Error(`Could not load transformers.js from ${vendor}: ${err.message}`);
  }
  const { env, pipeline } = transformers;
  env.allowRemoteModels = false;
  // transformers.js would import onnxruntime's WASM factory from a blob: URL, which the site's
  // CSP (script-src 'self') blocks; without its WASM cache it imports the vendored file itself.
  env.useWasmCache = false;
  env.allowLocalModels = true;
  // A path, not a full URL: transformers.js 4.3.1 only probes for tokenizer_config.json when the
  // local path is not an http(s) URL, and otherwise silently loads no tokenizer at all.
  env.localModelPath = new URL("..", modelUrl).pathname;
  // The bundle would ask for the 27 MB asyncify build (WebGPU support); the CPU build is 14 MB and
  // is all the WASM backend needs, so name both of its files explicitly.
  env.backends.onnx.wasm.wasmPaths = {
    mjs: vendor + "ort-wasm-simd-threaded.mjs",
    wasm: vendor + "ort-wasm-simd-threaded.wasm",
  };
  if (copies === "gz") {
    const fetchFn = env.fetch || ((url, init) => fetch(url, init));
    const decoded = DECODED_MODEL_FILES.map((name) => new URL(name, modelUrl).href);
    env.fetch = decodingFetch(decoded, { copies, fetchFn });
    const wasm = await fetchDecoded(env.backends.onnx.wasm.wasmPaths.wasm, { copies });
    if (!wasm.ok) throw new Error(`Could not fetch onnxruntime's WASM from ${vendor}: HTTP ${wasm.status}`);
    env.backends.onnx.wasm.wasmBinary = await wasm.arrayBuffer();
  }
  // onnxruntime in its own worker (a module worker of the vendored transformers.min.js): creating the
  // session (~1.5 s of CPU on a cold start) and each inference then leave the page responsive and
  // overlap with Python booting in ask.js's worker.
  env.backends.onnx.wasm.proxy = true;
  const where = `${env.localModelPath}${modelName}/`;
  let extractor;
  try {
    extractor = await pipeline("feature-extraction", modelName, { dtype: "q8", device: "wasm" });
    mark("model-ready");
  } catch (err) {
    throw new Error(`Could not load the query model from ${where}: ${err.message}`);
  }
  if (!extractor.tokenizer) {
    throw new Error(`Could not load the query model's tokenizer from ${where} (tokenizer_config.json missing?)`);
  }
  return extractor;
}

// Unit vector (Float32Array, 384 dims) for one text. Call loadEmbedder(baseUrl) first.
export async function embed(text) {
  if (extractorPromise === null) {
    throw new Error("embed() called before loadEmbedder(baseUrl)");
  }
  const extractor = await extractorPromise;
  const output = await extractor(text, { pooling: "mean", normalize: true });
  return Float32Array.from(output.data);
}
