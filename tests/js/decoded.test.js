import assert from "node:assert/strict";
import { test } from "node:test";
import { brotliCompressSync, brotliDecompressSync, gzipSync } from "node:zlib";

import { copiesFor, decodingFetch, fetchDecoded } from "../../site_template/static/ask/decoded.js";

const DIR = "http://site.test/wiki/vendor/pyodide.0a1b/";
const WASM = DIR + "pyodide.asm.wasm";
// a WASM module's header and some body: what the copies hold
const FILE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...new TextEncoder().encode("body ".repeat(200))]);

// A static host over `files` (URL -> bytes); records every URL; a body split in small chunks, as a
// network delivers it (the magic may straddle two).
// `headers`: extra headers on every answer; `cancelled`: the URLs whose bodies were cancelled.
function fakeHost(files, headers = {}) {
  const requested = [];
  const cancelled = [];
  const fetchFn = async (url) => {
    requested.push(url);
    if (!files.has(url)) return new Response("missing", { status: 404 });
    const bytes = files.get(url);
    const body = new ReadableStream({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 1) controller.enqueue(bytes.subarray(i, i + 1));
        controller.close();
      },
      cancel: () => {
        cancelled.push(url);
      },
    });
    return new Response(body, { headers: { "Content-Type": "application/gzip", ...headers } });
  };
  return { fetchFn, requested, cancelled };
}

// A Brotli decoder as pyodide_boot.js hands one over (`(url) => TransformStream`), here Node's own
// (the site's, brotli-dec-wasm, runs in Chromium: tests/site/test_hosting.py); records the URLs it decoded.
function nodeBrotli() {
  const decoded = [];
  const decoder = (url) => {
    decoded.push(url);
    const parts = [];
    return new TransformStream({
      transform: (chunk) => {
        parts.push(chunk);
      },
      flush: (controller) => controller.enqueue(new Uint8Array(brotliDecompressSync(Buffer.concat(parts)))),
    });
  };
  return { decoder, decoded };
}
const BR = new Uint8Array(brotliCompressSync(FILE));
const GZ = new Uint8Array(gzipSync(FILE));

async function bytesOf(response) {
  return new Uint8Array(await response.arrayBuffer());
}

test("copiesFor: Brotli or zstd from the host means the file itself, anything else its gzip copy", () => {
  assert.equal(copiesFor("br"), "raw");
  assert.equal(copiesFor("zstd"), "raw");
  assert.equal(copiesFor("gzip, br"), "raw");
  assert.equal(copiesFor(" BR "), "raw");
  assert.equal(copiesFor("gzip"), "gz"); // a host gzipping on the fly may not do it for WASM
  assert.equal(copiesFor(""), "gz");
  assert.equal(copiesFor(null), "gz");
});

test("a plain host: the .gz copy is fetched and inflated, the file itself never", async () => {
  const host = fakeHost(new Map([[WASM + ".gz", new Uint8Array(gzipSync(FILE))]]));
  const response = await fetchDecoded(WASM, { copies: "gz", fetchFn: host.fetchFn });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("Content-Type"), "application/wasm"); // instantiateStreaming needs it
  assert.deepEqual(await bytesOf(response), FILE);
  assert.deepEqual(host.requested, [WASM + ".gz"]);
});

test("a host that inflated the copy itself (Content-Encoding: gzip on .gz): the bytes are kept as they came", async () => {
  const host = fakeHost(new Map([[WASM + ".gz", FILE]]));
  const response = await fetchDecoded(WASM, { copies: "gz", fetchFn: host.fetchFn });
  assert.deepEqual(await bytesOf(response), FILE);
});

test("copies raw: the file's own URL, answered as the host answered", async () => {
  const host = fakeHost(new Map([[WASM, FILE]]));
  const response = await fetchDecoded(WASM, { copies: "raw", fetchFn: host.fetchFn });
  assert.deepEqual(await bytesOf(response), FILE);
  assert.deepEqual(host.requested, [WASM]);
});

test("a copy the host lacks falls back to the file; another error is returned as it came", async () => {
  const host = fakeHost(new Map([[WASM, FILE]]));
  const response = await fetchDecoded(WASM, { copies: "gz", fetchFn: host.fetchFn });
  assert.deepEqual(await bytesOf(response), FILE);
  assert.deepEqual(host.requested, [WASM + ".gz", WASM]);
  const failing = async () => new Response("no", { status: 503 });
  assert.equal((await fetchDecoded(WASM, { copies: "gz", fetchFn: failing })).status, 503);
});

test("an empty copy is an empty file, not an error", async () => {
  const host = fakeHost(new Map([[WASM + ".gz", new Uint8Array(gzipSync(new Uint8Array(0)))]]));
  assert.equal((await bytesOf(await fetchDecoded(WASM, { copies: "gz", fetchFn: host.fetchFn }))).length, 0);
  const bare = fakeHost(new Map([[WASM + ".gz", new Uint8Array(0)]]));
  assert.equal((await bytesOf(await fetchDecoded(WASM, { copies: "gz", fetchFn: bare.fetchFn }))).length, 0);
});

test("decodingFetch answers only its URLs, whole GETs, decoded; the rest passes through untouched", async () => {
  const STDLIB = DIR + "python_stdlib.zip";
  const host = fakeHost(
    new Map([
      [WASM + ".gz", new Uint8Array(gzipSync(FILE))],
      [STDLIB, FILE],
    ]),
  );
  const fetchFn = decodingFetch([WASM], { copies: "gz", fetchFn: host.fetchFn, base: DIR });
  // as Pyodide asks: a URL object with empty options; as transformers.js: a path with headers
  assert.deepEqual(await bytesOf(await fetchFn(new URL(WASM), {})), FILE);
  assert.deepEqual(await bytesOf(await fetchFn("/wiki/vendor/pyodide.0a1b/pyodide.asm.wasm", { headers: {} })), FILE);
  await fetchFn(STDLIB);
  await fetchFn(WASM, { headers: { Range: "bytes=0-0" } });
  await fetchFn(WASM, { method: "HEAD" });
  await fetchFn(WASM, { integrity: "sha256-x" });
  assert.deepEqual(host.requested, [WASM + ".gz", WASM + ".gz", STDLIB, WASM, WASM, WASM]);
});

test("given a Brotli decoder, a plain host's .br copy is fetched and decoded: not the .gz copy, not the file", async () => {
  const host = fakeHost(new Map([[WASM + ".br", BR], [WASM + ".gz", GZ], [WASM, FILE]]));
  const brotli = nodeBrotli();
  const response = await fetchDecoded(WASM, { copies: "gz", fetchFn: host.fetchFn, brotli: Promise.resolve(brotli.decoder) });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("Content-Type"), "application/wasm");
  assert.deepEqual(await bytesOf(response), FILE);
  assert.deepEqual(host.requested, [WASM + ".br"]);
  assert.deepEqual(brotli.decoded, [WASM]);
});

test("a Brotli decoder that does not load: the .br download is cancelled and the .gz copy inflated", async () => {
  for (const failed of [() => Promise.resolve(null), () => Promise.reject(new Error("refused"))]) {
    const brotli = failed();
    const host = fakeHost(new Map([[WASM + ".br", BR], [WASM + ".gz", GZ]]));
    const response = await fetchDecoded(WASM, { copies: "gz", fetchFn: host.fetchFn, brotli });
    assert.deepEqual(await bytesOf(response), FILE);
    assert.deepEqual(host.requested, [WASM + ".br", WASM + ".gz"]);
    assert.deepEqual(host.cancelled, [WASM + ".br"]);
  }
});

test("a .br copy the host lacks: the .gz copy; another error on it is returned as it came", async () => {
  const host = fakeHost(new Map([[WASM + ".gz", GZ]]));
  const brotli = nodeBrotli();
  const response = await fetchDecoded(WASM, { copies: "gz", fetchFn: host.fetchFn, brotli: Promise.resolve(brotli.decoder) });
  assert.deepEqual(await bytesOf(response), FILE);
  assert.deepEqual(host.requested, [WASM + ".br", WASM + ".gz"]);
  assert.deepEqual(brotli.decoded, []);
  const failing = async () => new Response("no", { status: 503 });
  const failed = await fetchDecoded(WASM, { copies: "gz", fetchFn: failing, brotli: Promise.resolve(brotli.decoder) });
  assert.equal(failed.status, 503);
});

test("a host that labels .br copies Content-Encoding: br (the browser decoded them): the bytes as they came", async () => {
  const host = fakeHost(new Map([[WASM + ".br", FILE]]), { "Content-Encoding": "br" });
  const brotli = nodeBrotli();
  const response = await fetchDecoded(WASM, { copies: "gz", fetchFn: host.fetchFn, brotli: Promise.resolve(brotli.decoder) });
  assert.deepEqual(await bytesOf(response), FILE);
  assert.deepEqual(brotli.decoded, []);
});

test("copies raw: the decoder is not used, the file's own URL is fetched", async () => {
  const host = fakeHost(new Map([[WASM, FILE]]));
  const brotli = nodeBrotli();
  const response = await fetchDecoded(WASM, { copies: "raw", fetchFn: host.fetchFn, brotli: Promise.resolve(brotli.decoder) });
  assert.deepEqual(await bytesOf(response), FILE);
  assert.deepEqual(host.requested, [WASM]);
});

test("decodingFetch hands its Brotli decoder on: its URLs come as decoded .br copies", async () => {
  const host = fakeHost(new Map([[WASM + ".br", BR]]));
  const brotli = nodeBrotli();
  const fetchFn = decodingFetch([WASM], { copies: "gz", fetchFn: host.fetchFn, brotli: Promise.resolve(brotli.decoder), base: DIR });
  assert.deepEqual(await bytesOf(await fetchFn(new URL(WASM), {})), FILE);
  assert.deepEqual(host.requested, [WASM + ".br"]);
});
