// The Ask panel: the toggle in the top bar, the panel with its log of the session's questions, the
// loading steps, the question box, and deep links (?ask=, ?q=). It drives the engine (engine.js) and
// draws entries (answer_view.js); its state lives in the closure of createPanel.

import { refinementNote } from "./answer.js";
import { renderEntry } from "./answer_view.js";
import { el } from "./dom.js";
import { compactResult } from "./history.js";
import { capQuestion, entryId, firstPart, formatMs, mark, MAX_QUESTION_CHARS } from "./util.js";

const PARTIAL_NOTE = "Semantic search is still loading: this first answer comes from keyword and code-graph search; it will be refined in a few seconds.";

const EXAMPLES = ["How is this project organised?", "Where is the command-line entry point?", "What happens when an error is raised?"];
const STEP_ICONS = { busy: "", done: "✓", warn: "!", fail: "✕" };

// An answer (or its error) is on screen: the page's own diagrams, held back while a deep link's first
// answer loads (site.js), may fetch Mermaid now.
function answerShown() {
  document.dispatchEvent(new CustomEvent("oya:answer-shown"));
}

// The question of a deep link (?ask= or ?q=), removed from the address so a reload does not ask again.
function takeDeepLinkQuestion() {
  const params = new URLSearchParams(location.search);
  const q = params.get("ask") || params.get("q");
  if (!q || !q.trim()) return null;
  params.delete("ask");
  params.delete("q");
  const search = params.toString();
  history.replaceState(history.state, "", location.pathname + (search ? `?${search}` : "") + location.hash);
  return q.trim();
}

function buildPanel() {
  const body = document.body;
  let panel = document.getElementById("ask-panel");
  if (!panel) {
    panel = el("aside", { id: "ask-panel", class: "ask-panel", hidden: true });
    body.append(panel);
  }
  panel.classList.add("ask-panel");
  panel.setAttribute("aria-label", "Ask about this code");
  // wiki pages leave the button to this script (it is of no use without it): it goes at the end of
  // the top bar, or floats when a page has none
  let toggle = document.getElementById("ask-toggle");
  if (!toggle) {
    const bar = document.querySelector("header.topbar");
    toggle = el("button", { id: "ask-toggle", type: "button", "aria-controls": "ask-panel" }, "Ask");
    if (bar) bar.append(toggle);
    else {
      toggle.classList.add("ask-fab");
      body.append(toggle);
    }
  }
  toggle.setAttribute("aria-expanded", "false");
  if (!toggle.title) toggle.title = "Ask a question about this code";
  const close = el("button", { type: "button", class: "ask-icon-btn ask-close", "aria-label": "Close the Ask panel", title: "Close (Esc)" }, "×");
  const clear = el("button", { type: "button", class: "ask-text-btn ask-clear", title: "Forget this session's questions" }, "Clear");
  const header = el(
    "header",
    { class: "ask-head" },
    el("div", { class: "ask-title" }, el("span", { class: "ask-logo", "aria-hidden": "true" }, "◆"), el("h2", { text: "Ask the code" })),
    el("div", { class: "ask-head-actions" }, clear, close),
  );
  const log = el("div", { class: "ask-log", role: "log", "aria-live": "polite", "aria-relevant": "additions" });
  const status = el("div", { class: "ask-status", "aria-live": "polite" });
  const input = el("textarea", {
    id: "ask-input",
    class: "ask-input",
    rows: 2,
    placeholder: "Ask about this repository…",
    "aria-label": "Your question",
    autocomplete: "off",
    spellcheck: "false",
  });
  const submit = el("button", { type: "submit", class: "ask-submit" }, "Ask");
  const form = el(
    "form",
    { class: "ask-form", autocomplete: "off" },
    el("div", { class: "ask-input-wrap" }, input, submit),
    el("p", { class: "ask-hint" }, "Enter to ask · Shift+Enter for a new line · answered offline in your browser"),
  );
  panel.replaceChildren(header, log, status, form);
  return { panel, toggle, close, clear, log, status, input, submit, form };
}

// root: the site root as the page links it; engine: createEngine(); history: createHistory();
// openFlag: createOpenFlag(); diagrams: createDiagrams(). Returns {start, ask}.
export function createPanel({ root, engine, history: store, openFlag, diagrams }) {
  let ui = null;
  let busy = false;
  const entryContext = { root, diagrams, onDiagram: (item, svg) => store.update(item.id, { svg }) };

  // a history write still waiting for an idle moment is done when the reader leaves the page
  globalThis.addEventListener?.("pagehide", () => store.flush());

  function scrollLogTo(node) {
    // the panel's log scrolls (never the page) so that the entry's question is at the top
    ui.log.scrollTop = Math.max(0, node.offsetTop - 8);
  }

  function setOpen(open, { focus = false, persist = true } = {}) {
    ui.panel.hidden = !open;
    document.body.classList.toggle("ask-open", open);
    ui.toggle.setAttribute("aria-expanded", open ? "true" : "false");
    if (persist) openFlag.write(open);
    if (open) {
      if (!ui.log.childElementCount) renderHistory();
      if (focus) ui.input.focus();
    }
  }

  function renderProgress() {
    if (!ui) return;
    const steps = [...engine.progress().values()];
    const rows = steps.map((step) =>
      el(
        "li",
        { class: `ask-step ask-step-${step.state}` },
        el("span", { class: "ask-step-icon", "aria-hidden": "true" }, STEP_ICONS[step.state] || ""),
        el("span", { class: "ask-step-label", text: step.label }),
        step.ms ? el("span", { class: "ask-step-ms", text: formatMs(step.ms) }) : null,
        step.detail ? el("span", { class: "ask-step-detail", text: step.detail }) : null,
      ),
    );
    const loading = steps.some((s) => s.state === "busy");
    ui.status.replaceChildren(rows.length && (loading || busy) ? el("ul", { class: "ask-steps" }, rows) : "");
  }

  function renderEmpty() {
    const examples = EXAMPLES.map((q) => {
      const b = el("button", { type: "button", class: "ask-chip" }, q);
      b.addEventListener("click", () => ask(q));
      return b;
    });
    return el(
      "div",
      { class: "ask-empty" },
      el("p", { class: "ask-empty-lead", text: "Ask a question about this repository." }),
      el(
        "p",
        { class: "ask-empty-sub" },
        "Answers come from the code itself — keyword, semantic and code-graph search, run in your browser. Nothing leaves this page.",
      ),
      el("div", { class: "ask-examples" }, examples),
    );
  }

  function renderHistory() {
    const items = store.read();
    ui.log.replaceChildren(...(items.length ? items.map((item) => renderEntry(item, entryContext)) : [renderEmpty()]));
    ui.log.scrollTop = ui.log.scrollHeight;
  }

  function append(node) {
    ui.log.querySelector(".ask-empty")?.remove();
    ui.log.append(node);
    scrollLogTo(node);
  }

  // Ask one question in the panel; resolves to the engine's run ({result, vector, ranked, question, note}) or {error}.
  async function ask(question, options = {}) {
    // a paste is kept whole up to MAX_PASTE_CHARS; past the core's limit the engine has it condensed
    // (the title, errors, stack frames, lines naming code) and the entry shows what was asked and
    // the core's line on what went, as `oya ask` does
    const capped = capQuestion(question);
    question = capped.text;
    // until then (and if it fails) the entry shows the question's first part
    const preview = question.length > MAX_QUESTION_CHARS ? `${firstPart(question, MAX_QUESTION_CHARS)}…` : question;
    mark("asked");
    setOpen(true);
    busy = true;
    ui.submit.disabled = true;
    ui.panel.classList.add("ask-busy");
    ui.input.value = question;
    const waiting = engine.isReady() ? "Searching the code…" : "Starting the in-browser search — the first question takes a few seconds…";
    const pending = el(
      "article",
      { class: "ask-entry ask-pending" },
      el("div", { class: "ask-q" }, el("span", { class: "ask-q-text", text: preview })),
      el("div", { class: "ask-thinking" }, el("span", { class: "ask-spinner", "aria-hidden": "true" }), waiting),
    );
    append(pending);
    renderProgress();
    const item = { id: entryId(), question: preview, at: Date.now() };
    // what was asked, and the core's line when it was condensed
    const asked = (run) => {
      item.question = run.question;
      if (run.note) item.questionNote = run.note;
    };
    let shown = pending;
    let first = null;
    // the engine answers at once without the query model while it loads, then in full: show both
    const onPartial = (partial) => {
      first = partial.result;
      asked(partial);
      const node = renderEntry({ ...item, result: compactResult(partial.result) }, entryContext);
      node.classList.add("ask-partial");
      node.append(el("p", { class: "ask-refining", role: "status", text: PARTIAL_NOTE }));
      shown.replaceWith(node);
      shown = node;
      answerShown();
    };
    let run;
    try {
      run = await engine.ask(question, options, { onPartial, more: capped.more });
      asked(run);
      item.result = compactResult(run.result);
      const refined = refinementNote(first, run.result);
      if (refined) item.refined = refined;
    } catch (err) {
      item.error = `Could not answer: ${err.message}`;
      run = { error: err.message };
    }
    const node = renderEntry(item, entryContext);
    shown.replaceWith(node);
    answerShown();
    store.push(item);
    busy = false;
    ui.submit.disabled = false;
    ui.panel.classList.remove("ask-busy");
    ui.input.value = "";
    renderProgress();
    scrollLogTo(node);
    ui.input.focus({ preventScroll: true });
    return run;
  }

  function wire() {
    const { panel, toggle, close, clear, input, form } = ui;
    toggle.addEventListener("click", () => {
      const opening = panel.hidden;
      setOpen(opening, { focus: true });
      if (opening) engine.warmUp(); // the user wants to ask: start loading while they type
    });
    close.addEventListener("click", () => {
      setOpen(false);
      toggle.focus();
    });
    clear.addEventListener("click", () => {
      store.clear();
      renderHistory();
      input.focus();
    });
    panel.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        setOpen(false);
        toggle.focus();
      }
    });
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    input.addEventListener("focus", () => engine.warmUp());
    input.addEventListener("input", () => {
      if (input.value.trim()) engine.warmUp();
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const question = input.value.trim();
      if (question && !busy) ask(question);
    });
  }

  // Draw the panel (open as the last page left it, without loading anything) and ask a deep link's question.
  function start() {
    ui = buildPanel();
    wire();
    setOpen(openFlag.read(), { persist: false });
    const q = takeDeepLinkQuestion();
    if (q) ask(q);
  }

  return { start, ask, renderProgress };
}
