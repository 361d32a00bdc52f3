import assert from "node:assert/strict";
import { test } from "node:test";

import { decodeVectors, rankVectors } from "../../site_template/static/ask/vectors.js";

// vectors.bin as oya/core/bundle.py writes it: count float32 scales, then count*dim int8 values.
function vectorsBin(rows, scales) {
  const dim = rows[0].length;
  const buf = new ArrayBuffer(4 * rows.length + rows.length * dim);
  new Float32Array(buf, 0, rows.length).set(scales);
  new Int8Array(buf, 4 * rows.length).set(rows.flat());
  return { buf, layout: { dim, count: rows.length, ids: rows.map((_, i) => `c${i}`), scales_offset: 0, data_offset: 4 * rows.length } };
}

test("decodeVectors: each int8 row times its float32 scale", () => {
  const { buf, layout } = vectorsBin(
    [
      [127, 0, -127],
      [10, 20, 30],
    ],
    [0.5, 0.25],
  );
  const v = decodeVectors(buf, layout);
  assert.equal(v.dim, 3);
  assert.equal(v.count, 2);
  assert.deepEqual(Array.from(v.matrix), [63.5, 0, -63.5, 2.5, 5, 7.5]);
});

test("decodeVectors: a layout that does not fit the bytes is an error", () => {
  const { buf, layout } = vectorsBin([[1, 2]], [1]);
  assert.throws(() => decodeVectors(buf, { ...layout, count: 5, ids: ["a", "b", "c", "d", "e"] }), /bytes; the layout needs/);
  assert.throws(() => decodeVectors(buf, { ...layout, ids: [] }), /names 0 ids for 1 rows/);
});

test("rankVectors: best cosine first, ties broken by chunk id, n of them", () => {
  const { buf, layout } = vectorsBin(
    [
      [1, 0],
      [0, 1],
      [1, 0],
      [-1, 0],
    ],
    [1, 1, 1, 1],
  );
  layout.ids = ["b", "z", "a", "c"];
  const v = decodeVectors(buf, layout);
  assert.deepEqual(rankVectors(v, [1, 0], 10), [
    ["a", 1],
    ["b", 1],
    ["z", 0],
    ["c", -1],
  ]);
  assert.deepEqual(
    rankVectors(v, [0, 1], 2).map(([id]) => id),
    ["z", "a"],
  );
  assert.deepEqual(rankVectors(v, [1, 0], 0), []);
});

test("rankVectors: the query is rounded to float32 and summed in float64, as the core does", () => {
  const { buf, layout } = vectorsBin([[100, 27]], [0.01]);
  const v = decodeVectors(buf, layout);
  const [[, score]] = rankVectors(v, [0.1, 0.3], 1);
  const f = Math.fround;
  const expected = f(f(100) * f(0.01)) * f(0.1) + f(f(27) * f(0.01)) * f(0.3);
  assert.equal(score, expected);
});

test("rankVectors: a query of the wrong dimension is refused", () => {
  const { buf, layout } = vectorsBin([[1, 2, 3]], [1]);
  assert.throws(() => rankVectors(decodeVectors(buf, layout), [1, 2], 1), /question vector has 2 dims, the index 3/);
});
