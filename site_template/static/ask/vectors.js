// The vector kernel: the bundle's int8 rows scored against the question's vector in JS, the same
// dequantised float32 rows and (-score, id) order as the core's VectorIndex (oya/core/vectors.py),
// ~40x faster than the pure-Python scan in Pyodide. Pure functions (tests/js/vectors.test.js); the
// engine worker runs them.

// The bundle's vectors.bin: count float32 scales, then count*dim int8 values (oya/core/bundle.py).
// Dequantise once: row * scale as float32, exactly the core's rows.
export function decodeVectors(buffer, layout) {
  const { dim, count, ids, scales_offset: scalesOffset, data_offset: dataOffset } = layout;
  if (!Array.isArray(ids) || ids.length !== count) throw new Error(`vector layout names ${ids?.length} ids for ${count} rows`);
  if (dataOffset + count * dim > buffer.byteLength) throw new Error(`vectors.bin is ${buffer.byteLength} bytes; the layout needs ${dataOffset + count * dim}`);
  const scales = new Float32Array(buffer, scalesOffset, count);
  const q = new Int8Array(buffer, dataOffset, count * dim);
  const matrix = new Float32Array(count * dim);
  for (let r = 0; r < count; r++) {
    const s = scales[r];
    const off = r * dim;
    for (let j = 0; j < dim; j++) matrix[off + j] = q[off + j] * s;
  }
  return { dim, count, ids, matrix };
}

function byId(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Cosine of the query with every row (float64 accumulation), best n first as [id, score], ties by chunk id.
export function rankVectors(vectors, query, n) {
  const { dim, count, ids, matrix } = vectors;
  if (query.length !== dim) throw new Error(`question vector has ${query.length} dims, the index ${dim}`);
  const q = Float32Array.from(query);
  const scores = new Float64Array(count);
  for (let r = 0; r < count; r++) {
    let acc = 0;
    const off = r * dim;
    for (let j = 0; j < dim; j++) acc += matrix[off + j] * q[j];
    scores[r] = acc;
  }
  const order = Array.from({ length: count }, (_, i) => i);
  order.sort((a, b) => scores[b] - scores[a] || byId(ids[a], ids[b]));
  return order.slice(0, Math.max(0, n)).map((i) => [ids[i], scores[i]]);
}
