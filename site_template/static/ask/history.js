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

export function createHistory(storage, { key = HISTORY_KEY, max = MAX_HISTORY } = {}) {
  function read() {
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

  return {
    read,
    write,
    push: (item) => write([...read(), item]),
    clear: () => write([]),
    // merge fields into a stored entry (e.g. its drawn diagram), if it is still there
    update(id, fields) {
      const items = read();
      const stored = items.find((x) => x.id === id);
      if (!stored) return false;
      Object.assign(stored, fields);
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
