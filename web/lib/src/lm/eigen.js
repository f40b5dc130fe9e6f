/**
 * Eigenvalues of a small real square matrix (not necessarily symmetric), in float64: reduction to
 * upper Hessenberg form by Householder similarities, then the shifted double-step (Francis) QR
 * iteration, following EISPACK's orthes and hqr (Wilkinson and Reinsch, "Handbook for Automatic
 * Computation, Vol. II: Linear Algebra", 1971) as JAMA writes them (public domain). Values only, no
 * vectors. For the d_k × d_k and V × V matrices of a head's OV circuit (ov-eigen.js): O(n³).
 * @module eigen
 */
import { MHAError } from '../engine/errors.js';

/** Householder reduction of H [n × n] (row arrays, modified in place) to upper Hessenberg form. */
function hessenberg(H, n) {
  const ort = new Float64Array(n);
  for (let m = 1; m < n - 1; m++) {
    let scale = 0;
    for (let i = m; i < n; i++) scale += Math.abs(H[i][m - 1]);
    if (scale === 0) continue;
    let h = 0;
    for (let i = n - 1; i >= m; i--) { ort[i] = H[i][m - 1] / scale; h += ort[i] * ort[i]; }
    let g = Math.sqrt(h);
    if (ort[m] > 0) g = -g;
    h -= ort[m] * g;
    ort[m] -= g;
    for (let j = m; j < n; j++) {
      let f = 0;
      for (let i = n - 1; i >= m; i--) f += ort[i] * H[i][j];
      f /= h;
      for (let i = m; i < n; i++) H[i][j] -= f * ort[i];
    }
    for (let i = 0; i < n; i++) {
      let f = 0;
      for (let j = n - 1; j >= m; j--) f += ort[j] * H[i][j];
      f /= h;
      for (let j = m; j < n; j++) H[i][j] -= f * ort[j];
    }
    H[m][m - 1] = scale * g;
    for (let i = m + 1; i < n; i++) H[i][m - 1] = 0;
  }
}

/** One double-shift QR sweep on rows/columns m … n of the active submatrix (JAMA's hqr2, values only). */
function francisSweep(H, nn, l, m, n, p0, q0, r0, x0) {
  let p = p0, q = q0, r = r0, x = x0, y, z;
  for (let k = m; k <= n - 1; k++) {
    const notlast = k !== n - 1;
    if (k !== m) {
      p = H[k][k - 1];
      q = H[k + 1][k - 1];
      r = notlast ? H[k + 2][k - 1] : 0;
      x = Math.abs(p) + Math.abs(q) + Math.abs(r);
      if (x === 0) continue;
      p /= x; q /= x; r /= x;
    }
    let s = Math.sqrt(p * p + q * q + r * r);
    if (p < 0) s = -s;
    if (s === 0) continue;
    if (k !== m) H[k][k - 1] = -s * x;
    else if (l !== m) H[k][k - 1] = -H[k][k - 1];
    p += s;
    x = p / s; y = q / s; z = r / s; q /= p; r /= p;
    for (let j = k; j < nn; j++) {
      let t = H[k][j] + q * H[k + 1][j];
      if (notlast) { t += r * H[k + 2][j]; H[k + 2][j] -= t * z; }
      H[k][j] -= t * x;
      H[k + 1][j] -= t * y;
    }
    for (let i = 0; i <= Math.min(n, k + 3); i++) {
      let t = x * H[i][k] + y * H[i][k + 1];
      if (notlast) { t += z * H[i][k + 2]; H[i][k + 2] -= t * r; }
      H[i][k] -= t;
      H[i][k + 1] -= t * q;
    }
  }
}

/**
 * The eigenvalues of a real n × n matrix.
 * @param {ArrayLike<number>} A [n, n] row-major (not modified)
 * @param {number} n
 * @returns {{re: Float64Array, im: Float64Array}} [n] each; complex ones come in conjugate pairs
 *   (re equal, im = ±); order: as the iteration deflates them (unsorted)
 * @throws {MHAError} INVALID_ARGUMENT (A not n × n; the iteration not converged within 30·n² sweeps),
 *   NON_FINITE (a value of A not finite)
 */
export function eigenvalues(A, n) {
  if (!Number.isInteger(n) || n < 1 || !A || A.length !== n * n) {
    throw new MHAError('INVALID_ARGUMENT', `eigenvalues: A must hold n × n = ${Number.isInteger(n) ? n * n : '?'} numbers for n = ${JSON.stringify(n)}, got ${A?.length}`);
  }
  const H = Array.from({ length: n }, (_, i) => Float64Array.from({ length: n }, (_, j) => A[i * n + j]));
  for (const row of H) for (const v of row) if (!Number.isFinite(v)) throw new MHAError('NON_FINITE', `eigenvalues: A must be finite, got ${v}`);
  hessenberg(H, n);
  const re = new Float64Array(n), im = new Float64Array(n);
  const eps = 2 ** -52;
  let norm = 0;
  for (let i = 0; i < n; i++) for (let j = Math.max(i - 1, 0); j < n; j++) norm += Math.abs(H[i][j]);
  let hi = n - 1, exshift = 0, iter = 0, total = 0;
  while (hi >= 0) {
    let l = hi;
    while (l > 0) {
      let s = Math.abs(H[l - 1][l - 1]) + Math.abs(H[l][l]);
      if (s === 0) s = norm;
      if (Math.abs(H[l][l - 1]) <= eps * s) break;   // ≤: a zero submatrix (norm 0) deflates too
      l--;
    }
    if (l === hi) {                       // one root
      re[hi] = H[hi][hi] + exshift;
      hi--; iter = 0;
    } else if (l === hi - 1) {            // two roots
      const w = H[hi][hi - 1] * H[hi - 1][hi];
      const p = (H[hi - 1][hi - 1] - H[hi][hi]) / 2;
      const q = p * p + w;
      let z = Math.sqrt(Math.abs(q));
      const x = H[hi][hi] + exshift;
      if (q >= 0) {
        z = p >= 0 ? p + z : p - z;
        re[hi - 1] = x + z;
        re[hi] = z !== 0 ? x - w / z : x + z;
      } else {
        re[hi - 1] = x + p; re[hi] = x + p; im[hi - 1] = z; im[hi] = -z;
      }
      hi -= 2; iter = 0;
    } else {                              // a sweep
      if (++total > 30 * n * n) throw new MHAError('INVALID_ARGUMENT', `eigenvalues: the QR iteration did not converge for this ${n} × ${n} matrix`);
      let x = H[hi][hi], y = H[hi - 1][hi - 1], w = H[hi][hi - 1] * H[hi - 1][hi];
      if (iter === 10) {                  // Wilkinson's exceptional shift
        exshift += x;
        for (let i = 0; i <= hi; i++) H[i][i] -= x;
        const s = Math.abs(H[hi][hi - 1]) + Math.abs(H[hi - 1][hi - 2]);
        x = y = 0.75 * s;
        w = -0.4375 * s * s;
      }
      if (iter === 30) {                  // MATLAB's exceptional shift
        let s = (y - x) / 2;
        s = s * s + w;
        if (s > 0) {
          s = Math.sqrt(s);
          if (y < x) s = -s;
          s = x - w / ((y - x) / 2 + s);
          for (let i = 0; i <= hi; i++) H[i][i] -= s;
          exshift += s;
          x = y = w = 0.964;
        }
      }
      iter++;
      let m = hi - 2, p, q, r, s;
      for (;;) {
        const z = H[m][m];
        r = x - z; s = y - z;
        p = (r * s - w) / H[m + 1][m] + H[m][m + 1];
        q = H[m + 1][m + 1] - z - r - s;
        r = H[m + 2][m + 1];
        s = Math.abs(p) + Math.abs(q) + Math.abs(r);
        p /= s; q /= s; r /= s;
        if (m === l) break;
        if (Math.abs(H[m][m - 1]) * (Math.abs(q) + Math.abs(r)) <
          eps * (Math.abs(p) * (Math.abs(H[m - 1][m - 1]) + Math.abs(z) + Math.abs(H[m + 1][m + 1])))) break;
        m--;
      }
      for (let i = m + 2; i <= hi; i++) { H[i][i - 2] = 0; if (i > m + 2) H[i][i - 3] = 0; }
      francisSweep(H, n, l, m, hi, p, q, r, s);
    }
  }
  return { re, im };
}
