// Small pure helpers the Ask panel's modules share: no DOM, no state (tests/js/util.test.js).

// = oya.core.query.MAX_QUESTION_CHARS (tests/site/test_ask_limits.py holds them together): past it
// the engine has the worker condense a question before embedding it
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

// A pasted question is kept whole up to this many characters: past MAX_QUESTION_CHARS the worker
// condenses it (oya.core.report, linear time), and this bounds that work and the page's. Beyond it
// the first part is kept and the note says "more than" (as `oya search -` does past its own bound).
export const MAX_PASTE_CHARS = 1000000;

// The first `n` UTF-16 units of text, never half a surrogate pair, trailing blanks dropped.
export function firstPart(text, n) {
  let kept = String(text).slice(0, n);
  const last = kept.charCodeAt(kept.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) kept = kept.slice(0, -1);
  return kept.trimEnd();
}

// A question capped at `limit` characters: {text, more}, more when a part past the limit was left
// out. Blanks around the question do not count.
export function capQuestion(question, limit = MAX_PASTE_CHARS) {
  const text = String(question).trim();
  return text.length <= limit ? { text, more: false } : { text: firstPart(text, limit), more: true };
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

// Characters that hide or reorder text (Trojan Source), shown as stand-ins "[U+202E]": the rule of
// oya.core.hidden, whose two lists these are (tests/site/test_hidden_marks.py holds them equal and
// runs both on the same strings). A joiner between two visible non-ASCII characters (emoji, Persian) stays.
export const HIDDEN_RANGES = [
  [0x00ad, 0x00ad], [0x034f, 0x034f], [0x061c, 0x061c], [0x115f, 0x1160], [0x17b4, 0x17b5],
  [0x180b, 0x180f], [0x200b, 0x200b], [0x200e, 0x200f], [0x2028, 0x2029], [0x202a, 0x202e],
  [0x2060, 0x206f], [0x3164, 0x3164], [0xfe00, 0xfe0d], [0xfeff, 0xfeff], [0xffa0, 0xffa0],
  [0xfff9, 0xfffb], [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0000, 0xe007f], [0xe0100, 0xe01ef],
];
export const JOINERS = [0x200c, 0x200d];
const RUN_SHOWN = 4;
const hex = (cp) => `\\u{${cp.toString(16)}}`;
const CANDIDATE = new RegExp(`[${HIDDEN_RANGES.map(([lo, hi]) => `${hex(lo)}-${hex(hi)}`).join("")}${JOINERS.map(hex).join("")}]`, "u");

// Text as runs [{hidden, text}] (by code point, so a tag character is one); joined they give the text back.
export function hiddenRuns(text) {
  text = String(text);
  if (!CANDIDATE.test(text)) return text ? [{ hidden: false, text }] : [];
  const cps = Array.from(text);
  const ordinary = (ch) => ch !== undefined && ch.codePointAt(0) >= 0x80 && !CANDIDATE.test(ch);
  const runs = [];
  cps.forEach((ch, i) => {
    const joined = JOINERS.includes(ch.codePointAt(0)) && ordinary(cps[i - 1]) && ordinary(cps[i + 1]);
    const hidden = CANDIDATE.test(ch) && !joined;
    const last = runs[runs.length - 1];
    if (last && last.hidden === hidden) last.chars.push(ch);
    else runs.push({ hidden, chars: [ch] });
  });
  return runs.map((r) => ({ hidden: r.hidden, text: r.chars.join("") }));
}

// "U+202E", or for a run "U+200B U+200B", at most four then "+N".
export function codePoints(run) {
  const cps = Array.from(run);
  const shown = cps.slice(0, RUN_SHOWN).map((ch) => "U+" + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0"));
  return shown.join(" ") + (cps.length > RUN_SHOWN ? ` +${cps.length - RUN_SHOWN}` : "");
}

// Text with each run of hidden characters replaced by its stand-in (for attributes and plain text).
export function visibleText(text) {
  return hiddenRuns(text).map((r) => (r.hidden ? `[${codePoints(r.text)}]` : r.text)).join("");
}
