// The wiki's own script: draw Mermaid diagrams and highlight cited lines. Nothing else.
//
// Pages are complete without it: a diagram's source stays readable as text, and line anchors
// (#L12) work natively. Mermaid is loaded from the site's own vendor folder, only on pages
// that have diagrams, with securityLevel "strict" (labels are sanitised server-side as well).

(function () {
  "use strict";

  var root = document.body ? document.body.getAttribute("data-root") || "" : "";

  // -- line highlighting: #L10 or #L10-L20 ------------------------------------------------------
  function clearHighlight() {
    var old = document.querySelectorAll(".hl");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("hl");
  }

  function highlightFromHash() {
    var m = /^#L(\d+)(?:-L?(\d+))?$/.exec(window.location.hash);
    clearHighlight();
    if (!m) return;
    var start = parseInt(m[1], 10);
    var end = m[2] ? parseInt(m[2], 10) : start;
    if (end < start) { var t = start; start = end; end = t; }
    if (end - start > 5000) end = start + 5000;
    var first = null;
    for (var n = start; n <= end; n++) {
      var el = document.getElementById("L" + n);
      if (!el) continue;
      // code lines are highlighted themselves; document anchors highlight their block
      var target = el.classList.contains("line") ? el : el.closest(".md-block") || el.parentElement;
      if (target) target.classList.add("hl");
      if (!first) first = el;
    }
    if (first && m[2]) first.scrollIntoView({ block: "start" });
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

  function start() {
    highlightFromHash();
    renderDiagrams();
  }

  window.addEventListener("hashchange", highlightFromHash);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
