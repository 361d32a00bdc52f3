// One history entry as DOM: the question, the confidence banner, warnings, the answer's items, the
// diagram, sources, snippets and the search-quality footer — drawn from answer.js's views of the
// core's structured result. Links are the core's URLs under the site root; all text goes in as text.

import { answerView, confidenceView, footerView, snippetsView, sourcesView, warnings } from "./answer.js";
import { renderDiagramBlock } from "./diagram.js";
import { el, withCode } from "./dom.js";
import { formatMs } from "./util.js";

function citeLink(root, c, label, cls = "ask-cite") {
  return el("a", { class: cls, href: root + c.url, title: c.tooltip }, label);
}

function renderMatch(root, item) {
  return el(
    "li",
    {},
    el("a", { class: "ask-ref", href: root + item.url, "aria-label": `source ${item.n}`, title: item.reason || null }, String(item.n)),
    el(
      "div",
      { class: "ask-answer-body" },
      el("div", { class: "ask-answer-title" }, citeLink(root, item, item.title), el("span", { class: "ask-answer-loc", text: item.location })),
      item.signature ? el("code", { class: "ask-answer-sig", text: item.signature }) : null,
      item.description ? el("div", { class: "ask-answer-desc" }, withCode(item.description)) : null,
    ),
  );
}

function renderConnected(root, item) {
  return el(
    "a",
    { class: "ask-node", href: root + item.url, title: item.reason ? `${item.tooltip} — ${item.reason}` : item.tooltip },
    el("span", { class: "ask-node-n", text: String(item.n) }),
    item.title,
  );
}

export function renderAnswer(root, answer) {
  const view = answerView(answer);
  const box = el("div", { class: "ask-answer" });
  if (view.note) box.append(el("p", { class: "ask-answer-note ask-muted", text: view.note }));
  if (view.empty) box.append(el("p", { class: "ask-answer-head" }, withCode(view.empty)));
  if (view.matches.length) {
    box.append(
      el("p", { class: "ask-answer-head", text: view.matchesHead }),
      el("ol", { class: "ask-answer-list" }, view.matches.map((item) => renderMatch(root, item))),
    );
  }
  if (view.connected.length) {
    box.append(
      el("p", { class: "ask-answer-head ask-answer-sub", text: view.connectedHead }),
      el("div", { class: "ask-connected" }, view.connected.map((item) => renderConnected(root, item))),
    );
  }
  return box;
}

function renderSources(root, result) {
  const view = sourcesView(result);
  const list = el(
    "ol",
    { class: "ask-sources" },
    view.all.map((c, i) => el("li", { hidden: i >= view.shown }, citeLink(root, c, c.label), el("span", { class: "ask-source-title", text: c.title }))),
  );
  const block = el("div", { class: "ask-block ask-sources-block" }, el("h3", { text: `Sources (${view.all.length})` }), list);
  if (view.more) {
    const more = el("button", { type: "button", class: "ask-text-btn ask-more" }, `Show ${view.more} more`);
    more.addEventListener("click", () => {
      for (const li of list.children) li.hidden = false;
      more.remove();
    });
    block.append(more);
  }
  return block;
}

function renderSnippets(root, snippets) {
  return el(
    "details",
    { class: "ask-block ask-snippets" },
    el("summary", {}, `Code snippets (${snippets.length})`),
    snippets.map((s) =>
      el(
        "figure",
        { class: "ask-snippet" },
        el("figcaption", {}, citeLink(root, s, s.label), el("span", { class: "ask-snippet-title", text: s.title })),
        el("pre", {}, el("code", { text: s.text })),
      ),
    ),
  );
}

function renderFooter(result) {
  const view = footerView(result, formatMs);
  return el(
    "footer",
    { class: "ask-foot" },
    view.chips.map((c) => el("span", { class: `ask-chan ask-chan-${c.status}`, title: c.tooltip }, c.text)),
    view.agreement ? el("span", { class: "ask-foot-agree", text: view.agreement }) : null,
    el("span", { class: "ask-foot-meta", text: view.meta, title: view.metaTooltip || null }),
  );
}

// item: {id, question, result?, error?, svg?, refined?, questionNote?}. ctx: {root, diagrams, onDiagram(item, svg)}.
export function renderEntry(item, ctx) {
  const entry = el("article", { class: "ask-entry", "data-entry": item.id });
  entry.append(el("div", { class: "ask-q" }, el("span", { class: "ask-q-text", text: item.question })));
  // a question past the core's limit was condensed (oya.core.report): the core's line, before the answer
  if (item.questionNote) entry.append(el("p", { class: "ask-question-note", role: "status", text: item.questionNote }));
  if (item.error) {
    entry.append(el("div", { class: "ask-error", role: "alert", text: item.error }));
    return entry;
  }
  const r = item.result;
  const confidence = confidenceView(r);
  entry.append(
    el(
      "div",
      { class: `ask-banner ask-banner-${confidence.level.toLowerCase()}`, "data-level": confidence.level },
      el("strong", { class: "ask-banner-level", text: confidence.text }),
      el("span", { class: "ask-banner-text", text: confidence.disclaimer }),
      confidence.gaps.length
        ? el("ul", { class: "ask-banner-gaps", "aria-label": "why not higher" }, confidence.gaps.map((g) => el("li", { text: g })))
        : null,
    ),
  );
  // the full answer that replaced a first one says whether it kept that one's lead (panel.js)
  if (item.refined) entry.append(el("p", { class: "ask-refined", role: "status", text: item.refined }));
  for (const w of warnings(r)) entry.append(el("div", { class: "ask-warning", role: "note" }, el("span", { "aria-hidden": "true" }, "⚠ "), w));
  entry.append(renderAnswer(ctx.root, r.answer));
  if (r.mermaid) entry.append(renderDiagramBlock(item, { diagrams: ctx.diagrams, onDrawn: (svg) => ctx.onDiagram(item, svg) }));
  if ((r.citations || []).length) entry.append(renderSources(ctx.root, r));
  const snippets = snippetsView(r);
  if (snippets.length) entry.append(renderSnippets(ctx.root, snippets));
  entry.append(renderFooter(r));
  return entry;
}
