// What an answer entry shows, as plain data: the core's result dict (oya.core: RetrievalResult.to_dict
// with the structured Answer.to_dict under "answer") turned into the labels, links and lists the view
// draws (answer_view.js). Nothing here parses the answer's prose or builds a page URL: every link is
// the `url` the core made (oya/core/sitepaths.py quotes it), relative to the site root.
// Pure functions (tests/js/answer.test.js).

export const CHANNEL_LABELS = { lexical: "Keyword search", semantic: "Semantic search", graph: "Code-graph search" };
export const LEVEL_TEXT = { HIGH: "High confidence", MEDIUM: "Medium confidence", LOW: "Low confidence" };
export const SOURCES_SHOWN = 6;
const MATCHES_HEAD = "The most relevant code:";
const CONNECTED_HEAD = "Connected code (through the code graph):";

// Why an item is in the answer (AnswerItem.reason: "vector+bm25", "graph:calls", ...) in words.
const REASON_WORDS = { bm25: "keyword search", vector: "semantic search", name: "code-graph search (a name)" };
export function reasonText(reason) {
  if (!reason) return "";
  if (reason === "graph") return "connected through the code graph";
  if (reason.startsWith("graph:")) return `connected through the code graph (${reason.slice(6)})`;
  return `found by ${reason
    .split("+")
    .map((r) => REASON_WORDS[r] || r)
    .join(" and ")}`;
}

function channelLabel(name) {
  return CHANNEL_LABELS[name] || name;
}

function lines(start, end) {
  return start === end ? `line ${start}` : `lines ${start}–${end}`;
}

// The banner: the level's words, its disclaimer and the evidence gaps that kept it from higher.
export function confidenceView(result) {
  const level = result.confidence?.level || "LOW";
  const gaps = result.confidence?.gaps || [];
  return { level, text: LEVEL_TEXT[level] || level, disclaimer: result.confidence?.disclaimer || "", gaps };
}

// How far the channels agree on the answer's first files (the CLI's SearchQuality.summary says the same).
export function agreementText(quality) {
  const ev = quality?.evidence;
  if (!ev || !(ev.convergence || []).length) return "";
  return `top files found by ${ev.convergence.join("/")} of ${ev.voters} channels`;
}

// One sentence per channel that did not run, when the core says the answer is degraded.
export function warnings(result) {
  if (!result.degraded) return [];
  const channels = result.search_quality?.channels || [];
  const ran = channels.filter((c) => c.status === "ran").map((c) => channelLabel(c.name).toLowerCase());
  const rest = ran.length ? ` Answered with ${ran.join(" and ")} only.` : "";
  const out = channels
    .filter((c) => c.status === "failed" || c.status === "unavailable")
    .map((c) => `${channelLabel(c.name)} did not run${c.detail ? ` — ${c.detail}` : ""}.${rest}`);
  return out.length ? out : [`The search was degraded: ${result.degraded_reason || "a channel did not run"}.`];
}

// One answer item (Answer.to_dict()["items"][i]) as the view shows it.
export function itemView(item) {
  const [start, end] = item.span;
  return {
    n: item.n,
    kind: item.kind,
    title: item.title,
    url: item.url,
    location: `${item.path}:${start}`,
    tooltip: `${item.path}, ${lines(start, end)}`,
    signature: item.signature || "",
    // the docstring's first sentence or the first code line; nothing when it only repeats the title
    // (a document section's heading: "Guide > Adding stock")
    description: item.summary && !item.title.endsWith(item.summary) ? item.summary : "",
    reason: reasonText(item.reason),
  };
}

// The answer: matches as a numbered list, connected code as a row of links; without items, its text.
export function answerView(answer = {}) {
  const items = (answer.items || []).map(itemView);
  const matches = items.filter((i) => i.kind === "match");
  const connected = items.filter((i) => i.kind === "connected");
  return {
    note: answer.note || "",
    empty: items.length ? "" : answer.text || "",
    matchesHead: matches.length ? MATCHES_HEAD : "",
    matches,
    connectedHead: connected.length ? CONNECTED_HEAD : "",
    connected,
  };
}

function citationView(c) {
  return {
    url: c.url,
    label: `${c.path}:${c.start_line}–${c.end_line}`,
    title: c.title,
    tooltip: `${c.path}, ${lines(c.start_line, c.end_line)}`,
  };
}

// Every citation of the retrieval; the first SOURCES_SHOWN visible, the rest behind "Show n more".
export function sourcesView(result) {
  const all = (result.citations || []).map(citationView);
  return { all, shown: Math.min(all.length, SOURCES_SHOWN), more: Math.max(0, all.length - SOURCES_SHOWN) };
}

// The context's snippets, each captioned by the citation it cuts from (same url).
export function snippetsView(result) {
  const byUrl = new Map((result.citations || []).map((c) => [c.url, c]));
  return (result.snippets || []).map((s) => {
    const c = byUrl.get(s.url) || { url: s.url, path: s.path, start_line: s.start_line, end_line: s.start_line, title: s.path };
    return { ...citationView(c), text: s.text };
  });
}

// The full answer replaces the first one (answered without the semantic channel while the question
// model loaded); this says whether the semantic channel kept its lead or changed it, so the two
// answers never disagree silently. The lead is the first matched item; "" without a first answer.
export function refinementNote(first, full) {
  const lead = (r) => (r?.answer?.items || []).find((i) => i.kind === "match");
  if (!first || !full) return "";
  const before = lead(first);
  const after = lead(full);
  if (!after) return before ? `Semantic search found nothing to add: the first answer led with ${before.title}.` : "";
  if (before && before.title === after.title && before.path === after.path) {
    return `Semantic search is in and kept the first answer's lead (${after.title}).`;
  }
  const was = before ? ` (the first answer led with ${before.title}, ${before.path})` : "";
  return `Semantic search changed this answer: it now leads with ${after.title}, ${after.path}${was}.`;
}

// The search-quality report: a chip per channel, the intent, how deep the search went, the time.
export function footerView(result, formatMs) {
  const q = result.search_quality || {};
  const chips = (q.channels || []).map((c) => ({
    name: c.name,
    status: c.status,
    text: `${c.status === "ran" ? "✓" : "✕"} ${c.name}`,
    tooltip: c.detail || `${c.found} found, ${c.used} used${c.agrees ? `, ${c.agrees} of the top files` : ""}`,
  }));
  const ms = result.browser_timings_ms?.query;
  const depth = [];
  if (q.fetch_depth) depth.push(`each channel ranked ${q.fetch_depth}`);
  if (q.hops) depth.push(`graph expanded ${q.hops} hop${q.hops === 1 ? "" : "s"} (+${q.expanded || 0} nodes)`);
  const agreement = agreementText(q);
  return {
    chips,
    agreement,
    meta: `${q.intent || ""}${ms ? ` · ${formatMs(ms)}` : ""}`,
    metaTooltip: depth.join("; "),
  };
}
