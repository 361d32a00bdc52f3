// The service worker's pure routing (site_template/sw.js): which requests it answers and how, the keys
// it stores them under, and which caches it deletes. sw.js is a classic script (every browser runs
// those as service workers), so it is evaluated here as one, outside a ServiceWorkerGlobalScope: its
// helpers are defined and no handler is installed.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import vm from "node:vm";

const SOURCE = readFileSync(new URL("../../site_template/sw.js", import.meta.url), "utf8");
const sw = vm.runInNewContext(
  `${SOURCE}\n;({ BUILD, below, isHashed, route, cacheKey, cacheNames, staleCaches, storable, offlinePage })`,
  { URL, Response },
);

// values made in the script's own realm, as plain values of this one (deepEqual compares prototypes)
const plain = (value) => JSON.parse(JSON.stringify(value));

const SCOPE = "http://127.0.0.1:8000/team/wiki/";
const HASHED = ["bundle.e503704cb6/", "vendor/pyodide.1a3aa05f1d/", "vendor/oya_core-0.1.0-py3-none-any.013979e862.whl"];

function request(url, { method = "GET", mode = "cors", cache = "default", headers = {} } = {}) {
  return { method, url, mode, cache, headers: new Headers(headers) };
}

const how = (url, options) => sw.route(request(url, options), SCOPE, HASHED);

test("route: pages network first, other files of the site network first, hashed names cache first", () => {
  assert.equal(how(`${SCOPE}files/inventory/service.py.html`, { mode: "navigate" }), "page");
  assert.equal(how(`${SCOPE}?ask=x`, { mode: "navigate" }), "page");
  assert.equal(how(`${SCOPE}static/ask/engine.js`), "file");
  assert.equal(how(`${SCOPE}manifest.json`), "file");
  assert.equal(how(`${SCOPE}vendor/mermaid/mermaid.min.js`), "file"); // kept name, not hashed
  assert.equal(how(`${SCOPE}bundle.e503704cb6/shards/terms-0123456789abcdef.json.gz`), "hashed");
  assert.equal(how(`${SCOPE}vendor/pyodide.1a3aa05f1d/pyodide.asm.wasm`), "hashed");
  assert.equal(how(`${SCOPE}vendor/oya_core-0.1.0-py3-none-any.013979e862.whl`), "hashed");
});

test("route: a hashed file's name is only itself; a folder's name holds what is below it", () => {
  assert.equal(how(`${SCOPE}vendor/oya_core-0.1.0-py3-none-any.013979e862.whl.evil`), "file");
  assert.equal(how(`${SCOPE}vendor/pyodide.1a3aa05f1d`), "file"); // the folder's own URL is no file of it
  assert.equal(how(`${SCOPE}bundle.e503704cb6x/shards/a`), "file");
  assert.equal(sw.route(request(`${SCOPE}bundle.e503704cb6/a`), SCOPE, []), "file"); // another build's
});

test("route: leaves to the browser what is not a GET of the site's own files", () => {
  assert.equal(how(`${SCOPE}index.html`, { method: "POST" }), null);
  assert.equal(how(`${SCOPE}index.html`, { method: "HEAD" }), null);
  assert.equal(how(`${SCOPE}vendor/pyodide.1a3aa05f1d/pyodide.asm.wasm`, { headers: { range: "bytes=0-9" } }), null);
  assert.equal(how(`${SCOPE}index.html`, { cache: "only-if-cached", mode: "no-cors" }), null);
  assert.equal(how(`${SCOPE}sw.js`), null);
  assert.equal(how("http://127.0.0.1:8001/team/wiki/index.html"), null); // another origin (port)
  assert.equal(how("https://127.0.0.1:8000/team/wiki/index.html"), null); // another origin (scheme)
  assert.equal(how("http://cdn.example/team/wiki/index.html"), null);
  assert.equal(how("http://127.0.0.1:8000/team/other/index.html", { mode: "navigate" }), null);
  assert.equal(how("http://127.0.0.1:8000/team/wiki-old/index.html", { mode: "navigate" }), null);
  assert.equal(how("http://127.0.0.1:8000/team/wiki", { mode: "navigate" }), null);
});

test("route: a repository's file name cannot climb out of the scope", () => {
  // page URLs carry repository file names; the URL parser resolves ".." and "%2e%2e" before the check
  for (const path of ["files/../../x.html", "files/%2e%2e/%2E%2E/%2e%2e/x.html", "files/.%2e/.%2e/.%2e/sw.js"]) {
    assert.equal(how(SCOPE + path, { mode: "navigate" }), null, path);
  }
  assert.equal(sw.below(`${SCOPE}files/a%2F..%2F..%2Fb.html`, SCOPE), "files/a%2F..%2F..%2Fb.html"); // one name
  assert.equal(sw.below(`${SCOPE}files/%2e%2e/static/sw.js`, SCOPE), "static/sw.js");
  assert.equal(sw.below("http://127.0.0.1:8000@evil.example/team/wiki/x", SCOPE), null);
});

test("cacheKey: a page without its query or fragment, a folder as its index.html; files as asked", () => {
  assert.equal(sw.cacheKey(`${SCOPE}index.html?ask=How+is+stock+removed#x`, "page"), `${SCOPE}index.html`);
  assert.equal(sw.cacheKey(SCOPE, "page"), `${SCOPE}index.html`);
  assert.equal(sw.cacheKey(`${SCOPE}dirs/inventory/?q=1`, "page"), `${SCOPE}dirs/inventory/index.html`);
  assert.equal(sw.cacheKey(`${SCOPE}search.html?q=Inventory`, "page"), `${SCOPE}search.html`);
  assert.equal(sw.cacheKey(`${SCOPE}static/site.js?v=2`, "file"), `${SCOPE}static/site.js?v=2`);
  assert.equal(sw.cacheKey(`${SCOPE}bundle.e503704cb6/x.gz#f`, "hashed"), `${SCOPE}bundle.e503704cb6/x.gz`);
});

test("staleCaches: this scope's earlier builds go; this build's, other sites' and other caches stay", () => {
  const mine = sw.cacheNames(SCOPE, "b2");
  assert.deepEqual(plain(mine), { pages: `oya ${SCOPE} pages b2`, files: `oya ${SCOPE} files` });
  const names = [
    `oya ${SCOPE} pages b1`,
    `oya ${SCOPE} pages b0`,
    mine.pages,
    mine.files,
    `oya ${SCOPE}sub/ pages b1`, // a site in a folder of this one: its own worker's
    "oya http://127.0.0.1:8000/team/ pages b1", // a site above this one
    "oya http://127.0.0.1:8001/team/wiki/ files",
    "transformers-cache",
  ];
  assert.deepEqual(plain(sw.staleCaches(names, SCOPE, "b2")), [`oya ${SCOPE} pages b1`, `oya ${SCOPE} pages b0`]);
  assert.deepEqual(plain(sw.staleCaches(names, `${SCOPE}sub/`, "b1")), []);
});

test("storable: only complete same-origin answers are kept", () => {
  assert.equal(sw.storable({ status: 200, type: "basic" }), true);
  assert.equal(sw.storable({ status: 206, type: "basic" }), false);
  assert.equal(sw.storable({ status: 404, type: "basic" }), false);
  assert.equal(sw.storable({ status: 0, type: "opaqueredirect" }), false);
  assert.equal(sw.storable({ status: 200, type: "opaque" }), false);
  assert.equal(sw.storable({ status: 200, type: "cors" }), false);
});

test("offlinePage: a 503 that runs nothing and links only the site's root", async () => {
  const response = sw.offlinePage("http://127.0.0.1:8000/a&b/\"wiki\"/");
  assert.equal(response.status, 503);
  assert.match(response.headers.get("content-security-policy"), /^default-src 'none'/);
  const html = await response.text();
  assert.match(html, /not available offline/);
  assert.ok(html.includes('href="http://127.0.0.1:8000/a&#38;b/%22wiki%22/index.html"'), html);
  assert.doesNotMatch(html, /<script/i);
});

test("the template's BUILD is a placeholder the build replaces", () => {
  assert.equal(sw.BUILD.id, "dev");
  assert.deepEqual(plain(sw.BUILD.hashed), []);
});
