// The wiki's own script: draw the file tree, Mermaid diagrams, and highlight cited lines.
//
// Pages are complete without it: the side bar then links the root folder page, a diagram's source stays
// readable as text, and code reads as plain coloured text (this script makes its lines numbered items). The line ids that citations
// (#L12) land on are given by this script (numberLines), saving ~7 bytes a line; in a rendered
// document, each block's anchor names its first line and this script adds the others. The file tree comes
// from nav/tree.<hash>.js (window.oyaTree, see oya/site/nav.py), shared by every page. Mermaid is loaded
// from the site's own vendor folder, only on pages that have diagrams (after the Ask panel's first answer
// when the page was opened to ask), with securityLevel "strict" (labels are sanitised server-side as well).
// It also registers the service worker that keeps visited pages and the Ask panel working offline
// (<root>sw.js).

(function () {
  "use strict";

  var root = document.body ? document.body.getAttribute("data-root") || "" : "";

  // -- code lines: the page has them as text, one per "\n" (a tag spans lines only around text); they
  // become the items of an <ol start=s> (item i is line s + i, its id L<s + i>) by moving nodes
  function lineList(pre) {
    var start = parseInt(pre.getAttribute("data-start") || "1", 10);
    var ol = document.createElement("ol");
    if (start > 1) ol.start = start;
    var li = document.createElement("li");
    ol.appendChild(li);
    var nodes = Array.prototype.slice.call(pre.childNodes);
    for (var i = 0; i < nodes.length; i++) {
      var node = nodes[i];
      // a token tag over several lines (docstring, string, comment) holds only text: one copy a line
      var multi = node.nodeType !== 3 && node.textContent.indexOf("\n") >= 0;
      if (node.nodeType !== 3 && !multi) { li.appendChild(node); continue; }
      var pieces = node.textContent.split("\n");
      for (var k = 0; k < pieces.length; k++) {
        if (k) { li = document.createElement("li"); ol.appendChild(li); }
        if (!pieces[k]) continue;
        var piece = multi ? node.cloneNode(false) : document.createTextNode(pieces[k]);
        if (multi) piece.textContent = pieces[k];
        li.appendChild(piece);
      }
    }
    for (var el = ol.firstElementChild, n = start; el; el = el.nextElementSibling) el.id = "L" + n++;
    pre.replaceChildren(ol);
  }

  function numberLines() {
    var pres = document.querySelectorAll("pre.code");
    for (var i = 0; i < pres.length; i++) if (pres[i].firstChild && !pres[i].querySelector("ol")) lineList(pres[i]);
    // a rendered document has one anchor per block (span.la#L<first> data-to=<last>): add the rest
    var marks = document.querySelectorAll("span.la[data-to]");
    for (var j = 0; j < marks.length; j++) {
      var first = parseInt(marks[j].id.slice(1), 10);
      var last = Math.min(parseInt(marks[j].getAttribute("data-to"), 10), first + 5000);
      var after = marks[j];
      for (var k = first + 1; k <= last; k++) {
        var span = document.createElement("span");
        span.className = "la";
        span.id = "L" + k;
        after.after(span);
        after = span;
      }
    }
  }

  // -- line highlighting: #L10 or #L10-L20 ------------------------------------------------------
  function clearHighlight() {
    var old = document.querySelectorAll(".hl");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("hl");
  }

  var scrollOnce = true;

  function highlightFromHash() {
    var m = /^#L(\d+)(?:-L?(\d+))?$/.exec(window.location.hash);
    clearHighlight();
    if (!m) return false;
    var start = parseInt(m[1], 10);
    var end = m[2] ? parseInt(m[2], 10) : start;
    if (end < start) { var t = start; start = end; end = t; }
    if (end - start > 5000) end = start + 5000;
    var first = null;
    for (var n = start; n <= end; n++) {
      var el = document.getElementById("L" + n);
      if (!el) continue;
      // code lines are highlighted themselves; document anchors highlight their block
      var inCode = el.parentElement && el.parentElement.closest("pre.code");
      var target = inCode ? el : el.closest(".md-block") || el.parentElement;
      if (target) target.classList.add("hl");
      if (!first) first = el;
    }
    // a single line scrolls natively once it has its id; on the first call it got it just now
    if (first && (m[2] || scrollOnce)) first.scrollIntoView({ block: "start" });
    scrollOnce = false;
    return !first && goToPart(start, window.location.hash);
  }

  // -- long files are split into parts: a line that is not on this page is on another part ---------
  function goToPart(line, hash) {
    var links = document.querySelectorAll("nav.parts a[data-first]");
    for (var i = 0; i < links.length; i++) {
      var a = links[i];
      var first = parseInt(a.getAttribute("data-first"), 10);
      var last = parseInt(a.getAttribute("data-last"), 10);
      if (line >= first && line <= last && !a.hasAttribute("aria-current")) {
        window.location.replace(a.getAttribute("href").split("#")[0] + hash);
        return true;
      }
    }
    return false;
  }

  // -- a click in a code line's number gutter (a CSS counter, not a link) selects the line ---------
  function onCodeClick(event) {
    var line = event.target;
    if (!line || !line.id || !/^L\d+$/.test(line.id) || line.tagName !== "LI") return;
    var gutter = parseFloat(getComputedStyle(line, "::before").width) || 0;
    if (event.clientX - line.getBoundingClientRect().left <= gutter + 12) {
      window.location.hash = "#" + line.id;
    }
  }

  // -- the file tree ----------------------------------------------------------------------------------
  function buildTree(holder, data) {
    var current = document.body.getAttribute("data-nav") || document.body.getAttribute("data-page") || "";

    function seg(entry, dflt) { return entry.length > 3 ? entry[3] : dflt; }

    function link(href, label, isCurrent) {
      var a = document.createElement("a");
      a.href = root + href;
      a.textContent = label;
      if (isCurrent) a.setAttribute("aria-current", "page");
      return a;
    }

    // fill <ul> with a folder's entries; `prefix` is its site path segments ("a/b~/")
    function fill(ul, dirs, files, prefix) {
      dirs.forEach(function (d) {
        var name = d[0];
        var path = prefix + seg(d, encodeURIComponent(name)) + "/";
        var li = document.createElement("li");
        li.className = "dir";
        var details = document.createElement("details");
        var summary = document.createElement("summary");
        var dirUrl = "dirs/" + path + "index.html";
        summary.appendChild(link(dirUrl, name, current === dirUrl));
        details.appendChild(summary);
        var inner = document.createElement("ul");
        details.appendChild(inner);
        var filled = false;
        function open() {
          if (filled) return;
          filled = true;
          fill(inner, d[1], d[2], path);
        }
        // an ancestor of the current page starts open; others are drawn when first opened
        if (current.indexOf("files/" + path) === 0 || current.indexOf("dirs/" + path) === 0) {
          details.open = true;
          open();
        }
        details.addEventListener("toggle", open);
        li.appendChild(details);
        ul.appendChild(li);
      });
      files.forEach(function (f) {
        var name = typeof f === "string" ? f : f[0];
        var page = typeof f === "string" ? encodeURIComponent(f) + ".html" : f[1];
        var url = "files/" + prefix + page;
        var li = document.createElement("li");
        li.className = "file";
        li.appendChild(link(url, name, current === url));
        ul.appendChild(li);
      });
    }

    var ul = document.createElement("ul");
    ul.className = "tree";
    fill(ul, data[0], data[1], "");
    holder.replaceChildren(ul);
    var here = ul.querySelector('[aria-current="page"]');
    if (here && here.scrollIntoView) here.scrollIntoView({ block: "nearest" });
  }

  // -- diagrams -----------------------------------------------------------------------------------
  function renderDiagrams() {
    var blocks = document.querySelectorAll("pre.mermaid");
    if (!blocks.length) return;
    var script = document.createElement("script");
    script.src = root + "vendor/mermaid/mermaid.min.js";
    script.onload = function () {
      var mermaid = window.mermaid;
      if (!mermaid) return;
      mermaid.initialize({
        startOnLoad: false,
        securityLevel: "strict",
        theme: "base",
        themeVariables: {
          fontFamily: getComputedStyle(document.body).fontFamily,
          fontSize: "13px",
          primaryColor: "#eef2ff",
          primaryBorderColor: "#6366f1",
          lineColor: "#94a3b8",
          textColor: "#0f172a",
        },
        flowchart: { htmlLabels: false, useMaxWidth: true, curve: "basis" },
      });
      var run = mermaid.run({ querySelector: "pre.mermaid" });
      if (run && run.catch) {
        run.catch(function (err) {
          // leave the source text visible; the page stays readable
          if (window.console) console.warn("mermaid could not draw a diagram:", err);
        });
      }
    };
    script.onerror = function () {
      // no vendored mermaid (a site built without the runtime): the diagram source stays as text
      document.documentElement.classList.add("no-mermaid");
    };
    document.head.appendChild(script);
  }

  // A reader who came to ask (a deep link, ?ask= or ?q=): the page's diagrams wait until the panel
  // shows its first answer ("oya:answer-shown", ask/panel.js), so Mermaid (1.2 MB) does not share
  // the link with the engine's runtime and shards; a panel that never answers (its script failed)
  // lets them draw after DIAGRAM_WAIT_MS.
  var DIAGRAM_WAIT_MS = 20000;
  function renderDiagramsAfterAsk() {
    var params = new URLSearchParams(location.search);
    var asking = (params.get("ask") || params.get("q") || "").trim();
    if (!asking || !document.querySelector("pre.mermaid")) return renderDiagrams();
    var drawn = false;
    function draw() {
      if (drawn) return;
      drawn = true;
      renderDiagrams();
    }
    document.addEventListener("oya:answer-shown", draw, { once: true });
    setTimeout(draw, DIAGRAM_WAIT_MS);
  }

  // -- top bar: the wiki links and search box are the same on every page, so this script draws them
  // (the page itself carries only the site name and the Symbols link, enough without scripts), then
  // loads the Ask panel (ask.js, a module, and its stylesheet).
  var WIKI_LINKS = [["index.html", "Overview"], ["architecture.html", "Architecture"], ["dirs/index.html", "Files"], ["search.html", "Symbols"]];

  function currentLink(page) {
    if (page.indexOf("symbols/") === 0) return "search.html";
    return page;
  }

  function drawTopBar() {
    var nav = document.querySelector("header.topbar .topnav");
    if (!nav) return;
    var here = currentLink(document.body.getAttribute("data-page") || "");
    nav.textContent = "";
    WIKI_LINKS.forEach(function (l) {
      var a = document.createElement("a");
      a.href = root + l[0];
      a.textContent = l[1];
      if (l[0] === here) a.setAttribute("aria-current", "page");
      nav.appendChild(a);
    });
    var form = document.createElement("form");
    form.className = "topsearch";
    form.action = root + "search.html";
    form.setAttribute("role", "search");
    var input = document.createElement("input");
    input.type = "search";
    input.name = "q";
    input.placeholder = "Search or ask about the code\u2026";
    input.setAttribute("aria-label", "Search or ask");
    input.autocomplete = "off";
    form.appendChild(input);
    nav.parentNode.insertBefore(form, nav.nextSibling);
  }

  // ask.js and every module it imports (under static/), requested at once: otherwise each level of
  // imports waits for the one above, a round trip each (at 100 ms latency the Ask button came 1.7 s
  // later). tests/site/test_pages.py checks this list against the imports.
  var ASK_MODULES = ["ask.js", "ask/panel.js", "ask/engine.js", "ask/history.js", "ask/diagram.js", "ask/answer_view.js",
    "ask/answer.js", "ask/protocol.js", "ask/decoded.js", "ask/dom.js", "ask/util.js"];

  // Opened from disk (file://), browsers refuse the Ask panel's modules, WebAssembly and fetch: say
  // so on the page, with what to do, instead of failing in the console.
  function fileNotice() {
    var note = document.createElement("aside");
    note.id = "ask-file-notice";
    note.setAttribute("role", "note");
    note.textContent = "Ask is off: this page was opened as a file, and browsers do not run the in-browser " +
      "search from file:// pages. Serve this folder over HTTP, e.g. `oya serve " + siteFolder() + "` " +
      "(or `python3 -m http.server` inside it), then open http://127.0.0.1:8000/ — the pages work as they are.";
    document.body.appendChild(note);
  }

  function siteFolder() {
    var path = decodeURIComponent(new URL(root || "./", location.href).pathname);
    return path.replace(/\/$/, "") || "SITE";
  }

  function loadAsk() {
    if (location.protocol === "file:") return fileNotice();
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = root + "static/ask.css";
    document.head.appendChild(css);
    ASK_MODULES.forEach(function (name) {
      var link = document.createElement("link");
      link.rel = "modulepreload";
      link.href = root + "static/" + name;
      document.head.appendChild(link);
    });
    // import() in a classic script resolves against this script, not the page: make it absolute
    import(new URL(root + "static/ask.js", document.baseURI).href);
  }

  // -- offline: <root>sw.js (site_template/sw.js, written by the build) keeps what the reader fetched,
  // so visited pages and the Ask panel work offline. Its scope is the site's root as a URL computed
  // from this page's relative path to it, never "/": a site under a sub-path controls only itself.
  // Where service workers cannot run (file://, http on a non-local host) the site works as before.
  function registerOffline() {
    var workers = navigator.serviceWorker;
    if (!workers || (location.protocol !== "http:" && location.protocol !== "https:")) return;
    var scope = new URL(root || "./", location.href).href;
    workers.register(new URL("sw.js", scope).href, { scope: scope }).catch(function (err) {
      if (window.console) console.info("oya: no offline copy (the service worker did not register):", err.message);
    });
  }

  function start() {
    registerOffline();
    drawTopBar();
    var holder = document.getElementById("tree");
    if (holder && window.oyaTree) buildTree(holder, window.oyaTree);
    var code = document.querySelectorAll("pre.code");
    for (var i = 0; i < code.length; i++) code[i].addEventListener("click", onCodeClick);
    numberLines();
    // leaving for the part that holds the cited line: load nothing more here
    if (highlightFromHash()) return;
    loadAsk();
    renderDiagramsAfterAsk();
  }

  window.addEventListener("hashchange", highlightFromHash);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
