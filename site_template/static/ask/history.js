// The panel's memory: the session's questions and answers (sessionStorage) and whether the panel is
// open (localStorage). The storage is passed in and may be missing, full or disabled: reads then give
// the empty state and writes drop the oldest entries until they fit (tests/js/history.test.js).

export const HISTORY_KEY = "oya.ask.history";
export const OPEN_KEY = "oya.ask.open";
export const MAX_HISTORY = 12;

// What an entry keeps of a result: everything rendered; not the hits and files (ids of the hits only).
export function compactResult(result) {
  const { hits, files, ...rest } = result;
  return { ...rest, hit_ids: (hits || []).map((h) => h.chunk_id) };
}

// later(fn): when to write a push (e.g. once the page is idle, after the answer is painted: the write
// serialises up to 12 answers with their diagrams, ~15 ms in Chromium). Without it a push writes at
// once. Pushed entries not written yet are read back, kept by update, dropped by clear and written
// by flush (call it when the page is hidden, so a link followed at once keeps the answer).
export function createHistory(storage, { key = HISTORY_KEY, max = MAX_HISTORY, later = null } = {}) {
  let queued = [];
  let scheduled = false;

  function stored() {
    try {
      const value = JSON.parse(storage?.getItem(key) || "[]");
      return Array.isArray(value) ? value : [];
    } catch {
      return [];
    }
  }

  function write(items) {
    let kept = items.slice(-max);
    while (kept.length) {
      try {
        storage.setItem(key, JSON.stringify(kept));
        return kept;
      } catch {
        kept = kept.slice(1); // over quota: drop the oldest
      }
    }
    try {
      storage?.removeItem(key);
    } catch {
      /* storage disabled */
    }
    return kept;
  }

  const read = () => [...stored(), ...queued].slice(-max);

  function flush() {
    scheduled = false;
    if (!queued.length) return;
    const items = read();
    queued = [];
    write(items);
  }

  return {
    read,
    write,
    flush,
    push(item) {
      if (!later) return write([...read(), item]);
      queued.push(item);
      if (!scheduled) {
        scheduled = true;
        later(flush);
      }
      return read();
    },
    clear() {
      queued = [];
      return write([]);
    },
    // merge fields into a stored entry (e.g. its drawn diagram), if it is still there
    update(id, fields) {
      flush();
      const items = stored();
      const entry = items.find((x) => x.id === id);
      if (!entry) return false;
      Object.assign(entry, fields);
      write(items);
      return true;
    },
  };
}

export function createOpenFlag(storage, key = OPEN_KEY) {
  return {
    read() {
      try {
        return storage?.getItem(key) === "1";
      } catch {
        return false;
      }
    },
    write(open) {
      try {
        storage.setItem(key, open ? "1" : "0");
      } catch {
        /* storage disabled */
      }
    },
  };
}
