// The Ask panel's "Connected code" diagram: the core's Mermaid source (oya/core/answer_diagram.py: the
// call paths between the answer's symbols, sanitised by oya/core/diagram.py) drawn by the vendored
// mermaid with securityLevel "strict", loaded the first time a diagram is drawn; its SVG is parsed,
// stripped of anything active (sanitizeSvg) and inserted as a node. Each node links to its wiki page:
// the core writes site-relative paths, which are the only links kept, made absolute against the
// site's root here (the panel runs on pages at any depth). The pure parts (mermaidConfig, siteLink,
// sanitizeSvg over any DOM-like tree) are tested in tests/js/diagram.test.js.

import { el } from "./dom.js";

export function mermaidConfig(dark) {
  return {
    startOnLoad: false,
    securityLevel: "strict",
    theme: dark ? "dark" : "neutral",
    htmlLabels: false,
    // labels are short already (oya/core/answer_diagram.py): Mermaid's wrapping only broke names
    // mid-word ("chunk_embedding" / "s"), so it is off
    markdownAutoWrap: false,
    flowchart: { htmlLabels: false, useMaxWidth: false, curve: "basis", nodeSpacing: 24, rankSpacing: 36, padding: 6, wrappingWidth: 400, minNodeWidth: 0 },
    themeVariables: { fontSize: "13px" },
    fontFamily: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
  };
}

// Elements that run code, embed documents or pull in other resources have no place in a diagram.
const ACTIVE_ELEMENTS = new Set(["script", "foreignobject", "iframe", "object", "embed", "image", "animate", "set", "handler"]);
const LINK_ATTRIBUTES = new Set(["href", "xlink:href", "src", "action", "formaction"]);

// A link the core wrote (oya/core/diagram.py, safe_link): a relative site path with an optional
// "#L<n>"; no scheme, no host, no leading "/". Anything else is not a link of ours.
const SITE_LINK = /^[A-Za-z0-9_.~%-][A-Za-z0-9_.~/%-]*(#L[0-9]+)?$/;

// `value` made absolute against the site's root `base`, or null when it is not a site link.
export function siteLink(value, base) {
  const text = String(value).trim();
  return base && SITE_LINK.test(text) && !text.includes(":") ? base + text : null;
}

// Strip the SVG tree in place: active elements go, so do event handlers and links that leave the
// document; "#fragment" links stay, and with `base` the core's site links stay, made absolute
// (siteLink). Works on DOM nodes and on anything with the same surface: children, nodeName,
// attributes [{name, value}], removeAttribute, setAttribute, remove. Returns the number removed.
export function sanitizeSvg(root, base = "") {
  let removed = 0;
  const visit = (node) => {
    for (const child of [...node.children]) {
      if (ACTIVE_ELEMENTS.has(child.nodeName.toLowerCase())) {
        child.remove();
        removed += 1;
      } else {
        visit(child);
      }
    }
    for (const { name, value } of [...node.attributes]) {
      const lower = name.toLowerCase();
      const link = LINK_ATTRIBUTES.has(lower) && !String(value).trim().startsWith("#");
      const inSite = link && node.nodeName.toLowerCase() === "a" && (lower === "href" || lower === "xlink:href") ? siteLink(value, base) : null;
      if (inSite) {
        node.setAttribute(name, inSite);
      } else if (lower.startsWith("on") || link || /^\s*javascript:/i.test(String(value))) {
        node.removeAttribute(name);
        removed += 1;
      }
    }
  };
  visit(root);
  return removed;
}

// Mermaid writes node links as xlink:href without declaring the xlink namespace (an HTML parser
// does not mind; the XML parser rejects the whole document), so declare it on the root.
export function withXlink(svgText) {
  const head = svgText.slice(0, svgText.indexOf(">") + 1);
  return head.startsWith("<svg") && !head.includes("xmlns:xlink=") ? svgText.replace("<svg", '<svg xmlns:xlink="http://www.w3.org/1999/xlink"') : svgText;
}

// The parsed, sanitised <svg> node for SVG text (site links made absolute against `base`), or null
// when the text is not an SVG document.
export function svgNode(svgText, base) {
  const doc = new DOMParser().parseFromString(withXlink(svgText), "image/svg+xml");
  const root = doc.documentElement;
  if (!root || root.nodeName.toLowerCase() !== "svg") return null;
  sanitizeSvg(root, base);
  return document.importNode(root, true);
}

// Mermaid for one page: loaded once (vendor/mermaid), each diagram drawn under an id of its own.
export function createDiagrams(base) {
  let mermaidPromise = null;
  let counter = 0;

  function load() {
    if (mermaidPromise) return mermaidPromise;
    mermaidPromise = new Promise((resolve, reject) => {
      if (globalThis.mermaid) return resolve(globalThis.mermaid);
      const script = document.createElement("script");
      script.src = base + "vendor/mermaid/mermaid.min.js";
      script.onload = () => resolve(globalThis.mermaid);
      script.onerror = () => reject(new Error("could not load mermaid"));
      document.head.append(script);
    }).then((mermaid) => {
      mermaid.initialize(mermaidConfig(matchMedia("(prefers-color-scheme: dark)").matches));
      return mermaid;
    });
    mermaidPromise.catch(() => {
      mermaidPromise = null;
    });
    return mermaidPromise;
  }

  return {
    base, // the site's root, which the diagrams' node links are relative to
    // SVG text for a Mermaid source
    async render(source) {
      const mermaid = await load();
      counter += 1;
      const { svg } = await mermaid.render(`oya-ask-diagram-${Date.now().toString(36)}-${counter}`, source);
      return svg;
    },
  };
}

// Shrink a diagram to fit the box, width and height (a chain runs down the page), but never below
// 60% (labels stay readable; the box scrolls for the rest and "Expand" shows it full size).
function fitDiagram(holder, svg) {
  requestAnimationFrame(() => {
    const box = svg.viewBox?.baseVal;
    const natural = box && box.width ? [box.width, box.height] : [svg.getBBox().width, svg.getBBox().height];
    const maxHeight = parseFloat(getComputedStyle(holder).maxHeight);
    const room = [holder.clientWidth - 16, Number.isFinite(maxHeight) ? maxHeight - 16 : Infinity];
    if (!natural[0] || room[0] <= 0) return;
    const scale = Math.min(1, Math.max(0.6, Math.min(room[0] / natural[0], room[1] / (natural[1] || 1))));
    svg.style.width = `${Math.round(natural[0] * scale)}px`;
    svg.style.maxWidth = "none";
    svg.removeAttribute("height");
  });
}

// A full-size view of a diagram in a modal dialog (Escape or the button closes it); onClose after.
function openDiagramDialog(svg, question, onClose) {
  const dialog = el("dialog", { class: "ask-dialog", "aria-label": "Connected code diagram" });
  const close = el("button", { type: "button", class: "ask-icon-btn", "aria-label": "Close the diagram" }, "×");
  dialog.append(
    el("header", { class: "ask-dialog-head" }, el("h2", {}, "Connected code"), el("span", { class: "ask-dialog-q", text: question }), close),
    el("div", { class: "ask-dialog-body" }, svg.cloneNode(true)),
  );
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog) dialog.close();
  });
  dialog.addEventListener("close", () => {
    dialog.remove();
    onClose();
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
}

function legend() {
  const key = (cls, label) => [el("i", { class: `ask-key ask-key-${cls}` }), label];
  return el("span", { class: "ask-legend", "aria-hidden": "true" }, key("seed", "match"), key("cls", "class"), key("fn", "function"), key("mod", "module"));
}

// The diagram block of an entry. `item.svg` (kept in the history) is shown as is; otherwise the source
// is drawn and onDrawn(svg) lets the caller keep it.
export function renderDiagramBlock(item, { diagrams, onDrawn = () => {} }) {
  const source = item.result.mermaid;
  const expand = el("button", { type: "button", class: "ask-text-btn ask-expand", title: "Show the diagram full size", disabled: true }, "Expand");
  const block = el("details", { class: "ask-block ask-diagram", open: true }, el("summary", {}, "Connected code", legend()));
  const holder = el("div", { class: "ask-mermaid", tabindex: "0", role: "img", "aria-label": "Diagram of the code connected to the answer" });
  block.append(holder);
  const put = (svgText) => {
    const node = svgText && svgNode(svgText, diagrams.base);
    if (!node) {
      holder.replaceChildren(el("pre", { class: "ask-mermaid-src", text: source }));
      return;
    }
    holder.replaceChildren(node);
    fitDiagram(holder, node);
    expand.disabled = false;
    expand.onclick = () => openDiagramDialog(node, item.question, () => expand.focus());
    block.append(el("div", { class: "ask-diagram-foot" }, el("span", { class: "ask-muted", text: "Scroll to pan" }), expand));
  };
  if (item.svg) {
    put(item.svg);
    return block;
  }
  holder.append(el("p", { class: "ask-muted", text: "Drawing the diagram…" }));
  diagrams
    .render(source)
    .then((svg) => {
      item.svg = svg;
      put(svg);
      onDrawn(svg);
    })
    .catch((err) => {
      holder.replaceChildren(
        el("p", { class: "ask-muted", text: `Diagram unavailable (${err.message}); its source:` }),
        el("pre", { class: "ask-mermaid-src", text: source }),
      );
    });
  return block;
}
