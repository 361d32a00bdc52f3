// Oya's service worker: the wiki keeps working offline once visited.
//
// Theory of operation:
// * Where it lives. The build writes this file to the site's root as sw.js (oya/site/offline.py), with
//   BUILD below filled in: the build's id (a digest of its pages' keys, static/ files and hashed names)
//   and the content-hashed names of manifest.json's "assets" (vendor/pyodide.<hash>/,
//   models/<name>.<hash>/, bundle.<hash>/, the core wheel). A worker controls at most its own folder, so it sits at the root; site.js registers it with
//   the root as its scope, a URL computed from the page's own relative path to the root, so a site under
//   a sub-path (/team/wiki/) controls only /team/wiki/. The browser re-reads sw.js on navigation; a
//   build that changed what readers fetch has another id, so its worker installs and takes over at once.
//   A worker takes over the open pages as soon as it is active (clients.claim): on a first visit,
//   what the page fetches from then on (the Ask runtime, loaded on the first question) is kept; what
//   it fetched before (the page itself) is kept the next time it is fetched.
// * What it answers (route()): only GET requests for a URL under the scope; anything else (another
//   origin, a POST, a range request, this file) is left to the browser, never cached.
//   - "hashed": a URL under one of this build's content-hashed names names one content forever:
//     cache first, fetched and kept on a miss. The runtime, the query model and every index shard a
//     question read stay available offline.
//   - "page" (a navigation) and "file" (anything else: static/ scripts, manifest.json, the nav tree):
//     network first, so a new build is seen while online; each good answer is kept, and served when
//     the network fails. A page is kept under its URL without the query (?ask=… deep links) and with
//     "index.html" for a folder URL. A page never visited, offline, gets a small offline page (503)
//     that names no requested URL; any other miss fails as it would without this worker.
// * Caches (one Cache Storage per origin, shared by every site on it, so each name holds the scope):
//   "oya <scope> pages <build id>" for pages and files, one per build; "oya <scope> files" for hashed
//   names, kept across builds (the runtime and model, tens of MB, rarely change). On activation the
//   caches of this scope's earlier builds are deleted and the hashed cache loses every name this
//   build no longer ships; other sites' caches are not touched.
// * Untrusted input. Page URLs carry repository file names; this worker never builds a URL or a cache
//   key from anything but the request's own parsed URL (the URL parser has resolved ".." and
//   "%2e%2e" by then), keeps it only if it is under the scope, and stores only complete same-origin
//   responses (status 200, type "basic"). Nothing is precached: only what the reader fetched is kept.
// * Where service workers do not run (file://, plain http on a non-local host, an old browser) the
//   site works as before: site.js's registration fails quietly.
//
// Pure helpers come first (tests/js/offline.test.js runs them in Node); the event handlers last.

"use strict";

const BUILD = { id: "dev", hashed: [] }; // this build's: oya/site/offline.py writes it

// The path of `url` below `scope` ("files/a.py.html"), or null when it is not under it (another
// origin, or outside the site's root). Both are absolute URLs; the scope ends in "/".
function below(url, scope) {
  const u = new URL(url);
  const s = new URL(scope);
  if (u.origin !== s.origin || !u.pathname.startsWith(s.pathname)) return null;
  return u.pathname.slice(s.pathname.length);
}

// Whether `rel` (a path below the scope) is under one of the build's hashed names: a folder name
// ends in "/" and holds everything below it; a file name is only itself.
function isHashed(rel, hashed) {
  return hashed.some((name) => (name.endsWith("/") ? rel.startsWith(name) : rel === name));
}

// How to answer a request: null (leave it to the browser), "hashed", "page" or "file".
// request: {method, url, mode, cache, headers: {has(name)}}.
function route(request, scope, hashed) {
  if (request.method !== "GET" || request.headers.has("range")) return null;
  // Chromium's devtools send only-if-cached requests that fetch() would refuse
  if (request.cache === "only-if-cached" && request.mode !== "same-origin") return null;
  const rel = below(request.url, scope);
  if (rel === null || rel === "sw.js") return null;
  if (isHashed(rel, hashed)) return "hashed";
  return request.mode === "navigate" ? "page" : "file";
}

// The cache key of a request's URL: a page without its query, a folder as its index.html; anything
// else as requested (without the fragment, which never reaches a request).
function cacheKey(url, how) {
  const u = new URL(url);
  u.hash = "";
  if (how !== "page") return u.href;
  u.search = "";
  if (u.pathname.endsWith("/")) u.pathname += "index.html";
  return u.href;
}

function cacheNames(scope, id) {
  return { pages: `oya ${scope} pages ${id}`, files: `oya ${scope} files` };
}

// The cache names to delete on activation: this scope's caches other than this build's two. A space
// never appears in a serialized URL, so no other scope's name starts with this scope's prefix.
function staleCaches(names, scope, id) {
  const keep = Object.values(cacheNames(scope, id));
  return names.filter((name) => name.startsWith(`oya ${scope} `) && !keep.includes(name));
}

// A response worth keeping: complete, same-origin, not a redirect or an error.
function storable(response) {
  return response.status === 200 && response.type === "basic";
}

const OFFLINE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Offline · Oya</title></head>
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>This page is not available offline</h1>
<p>The wiki's server cannot be reached, and this page was not opened on this device before.
Pages you have opened work offline, and so does asking a question once you have asked one.</p>
<p><a href="HOME">Go to the wiki's overview</a></p>
</body></html>
`;

// The answer to a page never visited while offline: names no requested URL, only the site's root.
function offlinePage(scope) {
  const home = new URL("index.html", scope).href.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return new Response(OFFLINE_PAGE.replace("HOME", home), {
    status: 503,
    statusText: "Offline",
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
      "Cache-Control": "no-store",
    },
  });
}

// -- the worker --------------------------------------------------------------------------------

if (typeof ServiceWorkerGlobalScope !== "undefined" && self instanceof ServiceWorkerGlobalScope) {
  const scope = self.registration.scope;
  const names = cacheNames(scope, BUILD.id);
  const MATCH = { ignoreVary: true }; // `oya serve` varies on Accept-Encoding; the key is the URL

  // Keep a copy while the page reads the original; the worker lives until the copy is stored.
  const keep = (event, cacheName, key, response) => {
    if (!storable(response)) return;
    const copy = response.clone();
    event.waitUntil(caches.open(cacheName).then((cache) => cache.put(key, copy)).catch(() => {}));
  };

  // A cached answer, or undefined; storage that cannot be read (disabled, evicted) is a miss, so the
  // site never fails online for its cache's sake.
  const lookup = (cacheName, key) =>
    caches.open(cacheName).then((cache) => cache.match(key, MATCH)).catch(() => undefined);

  const cacheFirst = async (event, key) => {
    const hit = await lookup(names.files, key);
    if (hit) return hit;
    const response = await fetch(event.request);
    keep(event, names.files, key, response);
    return response;
  };

  const networkFirst = async (event, key, how) => {
    let response;
    try {
      response = await fetch(event.request);
    } catch (err) {
      const hit = await lookup(names.pages, key);
      if (hit) return hit;
      if (how === "page") return offlinePage(scope);
      throw err;
    }
    keep(event, names.pages, key, response);
    return response;
  };

  // This scope's earlier builds' caches, and the hashed names this build no longer ships.
  const cleanUp = async () => {
    for (const name of staleCaches(await caches.keys(), scope, BUILD.id)) await caches.delete(name);
    const files = await caches.open(names.files);
    for (const request of await files.keys()) {
      const rel = below(request.url, scope);
      if (rel === null || !isHashed(rel, BUILD.hashed)) await files.delete(request);
    }
  };

  self.addEventListener("install", () => self.skipWaiting());

  // the page that registered this worker is served by it from now on (clients.claim), cleaned up or not
  self.addEventListener("activate", (event) => {
    event.waitUntil(cleanUp().catch(() => {}).then(() => self.clients.claim()));
  });

  self.addEventListener("fetch", (event) => {
    const how = route(event.request, scope, BUILD.hashed);
    if (how === null) return;
    const key = cacheKey(event.request.url, how);
    event.respondWith(how === "hashed" ? cacheFirst(event, key) : networkFirst(event, key, how));
  });
}
