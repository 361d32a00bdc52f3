// Small pure helpers the Ask panel's modules share: no DOM, no state (tests/js/util.test.js).

// = oya.core.query.MAX_QUESTION_CHARS (tests/site/test_ask_limits.py holds them together)
export const MAX_QUESTION_CHARS = 20000;

export function formatMs(ms) {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

// Text with `code spans` (or reST ``literals``: a run of backticks delimits) as pieces:
// [{code: false, text}, {code: true, text}, ...] (empty pieces dropped).
export function codeSpans(text) {
  return String(text)
    .split(/`+/)
    .map((part, i) => ({ code: i % 2 === 1, text: part }))
    .filter((piece) => piece.text !== "");
}

// A question past the limit cut to its first `limit` characters, and the line that says so
// (= oya.core.query.question_cut, what the CLI says): {text, note}, note null when nothing was cut.
// Blanks around the question do not count; a cut never leaves half a surrogate pair.
export function cutQuestion(question, limit = MAX_QUESTION_CHARS) {
  const text = String(question).trim();
  if (text.length <= limit) return { text: String(question), note: null };
  let kept = text.slice(0, limit);
  const last = kept.charCodeAt(kept.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) kept = kept.slice(0, -1);
  const n = (x) => x.toLocaleString("en-US");
  return { text: kept.trimEnd(), note: `The question is ${n(text.length)} characters long; only the first ${n(limit)} were read.` };
}

// A history entry's id: time, then randomness (two questions in one millisecond stay apart).
export function entryId(now = Date.now(), random = Math.random) {
  return `${now.toString(36)}${random().toString(36).slice(2, 6)}`;
}

// Performance marks named "oya:<step>" as [step, ms since "oya:warmup"] in time order, the first of each name.
export function markTimes(entries) {
  const all = entries.filter((m) => m.name.startsWith("oya:")).sort((a, b) => a.startTime - b.startTime);
  const start = all.find((m) => m.name === "oya:warmup");
  const t0 = start ? start.startTime : 0;
  const seen = new Set();
  const out = [];
  for (const m of all) {
    const name = m.name.slice(4);
    if (seen.has(name)) continue;
    seen.add(name);
    out.push([name, Math.round(m.startTime - t0)]);
  }
  return out;
}

// performance.mark that never throws (a worker or an old browser may lack the API).
export function mark(step, options) {
  try {
    performance.mark(`oya:${step}`, options);
  } catch {
    /* no performance API */
  }
}

// A base URL as an absolute folder URL (ending in "/").
export function absoluteBase(baseUrl, here = globalThis.location ? globalThis.location.href : undefined) {
  const href = new URL(baseUrl, here).href;
  return href.endsWith("/") ? href : href + "/";
}
