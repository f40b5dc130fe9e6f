/**
 * Layout changes of the matrices in model files: PyTorch's `nn.Linear.weight` is stored [out, in],
 * the core takes every matrix row-major [in, out] (DESIGN.md, "Conventions"); packed projections
 * (Q | K | V in one matrix) are cut into their parts.
 * @module matrices
 */

/**
 * Rows r0 .. r0+n of a row-major [rows, cols] matrix W ([out, in]), transposed: [cols, n] = Wᵀ,
 * the core's [in, out].
 * @param {ArrayLike<number>} w [rows, cols], row-major
 * @param {number} cols
 * @param {number} [r0] first row; default 0
 * @param {number} [n] rows taken; default every row from r0
 * @returns {Float32Array|Uint16Array} [cols, n], of w's type when w is 16-bit (Uint16Array), else float32
 */
export function transposed(w, cols, r0 = 0, n = w.length / cols - r0) {
  const out = w instanceof Uint16Array ? new Uint16Array(n * cols) : new Float32Array(n * cols);
  for (let r = 0; r < n; r++) {
    const src = (r0 + r) * cols;
    for (let i = 0; i < cols; i++) out[i * n + r] = w[src + i];
  }
  return out;
}

/**
 * Columns c0 .. c0+n of a row-major [rows, cols] matrix, as [rows, n].
 * @param {Float32Array} w [rows, cols], row-major
 * @returns {Float32Array|Uint16Array} [rows, n], of w's type (16-bit values stay 16-bit)
 */
export function columns(w, rows, cols, c0, n) {
  const out = w instanceof Uint16Array ? new Uint16Array(rows * n) : new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) out.set(w.subarray(r * cols + c0, r * cols + c0 + n), r * n);
  return out;
}
