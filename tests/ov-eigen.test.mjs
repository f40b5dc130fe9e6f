// Eigenvalues (web/lib/src/lm/eigen.js) and Elhage et al.'s eigenvalue positivity of each head's OV
// circuit (web/lib/src/lm/ov-eigen.js). References independent of both: matrices built with known
// spectra (S·B·S⁻¹ with B block-diagonal of real eigenvalues and rotation-scaling blocks a ± ib, S
// random and inverted here by Gauss-Jordan; companion matrices of polynomials with known roots;
// triangular matrices), and for the shipped models the full V × V matrix E·N₁·W_V·W_O·N_F·W_U built
// here in float64 from the file's tensors in PyTorch's layout, whose power traces tr(Mᵏ) must equal
// Σλᵏ of the d_k eigenvalues (k = 1…4: Newton's identities tie them to the spectrum), and whose own
// eigenvalues (97 × 97, all but d_k zero) must give the same Σ|λ|.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, parseSafetensors, MHAError } from '../web/lib/src/index.js';
import { eigenvalues } from '../web/lib/src/lm/eigen.js';
import { ovEigenvalues, eigenPositivity, positivityOf } from '../web/lib/src/lm/ov-eigen.js';
import { copyingScores, inductionVerdict } from '../web/lib/src/lm/copying.js';
import { mulberry32 } from '../web/lib/src/engine/weights.js';

const mha = await createMHA();
const modelsDir = new URL('../web/lib/models/', import.meta.url);

/** Sorted [re, im] pairs (by re, then im, each rounded to 1e-6 so that rounding cannot reorder) for comparing spectra. */
const key = (v) => Math.round(v * 1e6);
const sorted = (re, im) => Array.from(re, (r, i) => [r, im[i]]).sort((a, b) => key(a[0]) - key(b[0]) || key(a[1]) - key(b[1]));

function sameSpectrum(got, want, tol, msg) {
  const a = sorted(got.re, got.im), b = sorted(want.map((w) => w[0]), want.map((w) => w[1]));
  assert.equal(a.length, b.length, msg);
  a.forEach(([r, i], k) => assert.ok(Math.abs(r - b[k][0]) <= tol && Math.abs(i - b[k][1]) <= tol, `${msg}: ${r}+${i}i vs ${b[k]}`));
}

/** Gauss-Jordan inverse with partial pivoting, float64. */
function inverse(A, n) {
  const M = Array.from({ length: n }, (_, i) => [...Array.from({ length: n }, (_, j) => A[i * n + j]), ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    [M[c], M[p]] = [M[p], M[c]];
    const d = M[c][c];
    for (let j = 0; j < 2 * n; j++) M[c][j] /= d;
    for (let r = 0; r < n; r++) if (r !== c) { const f = M[r][c]; for (let j = 0; j < 2 * n; j++) M[r][j] -= f * M[c][j]; }
  }
  return Float64Array.from({ length: n * n }, (_, k) => M[Math.floor(k / n)][n + (k % n)]);
}

const matmul = (A, B, n) => Float64Array.from({ length: n * n }, (_, k) => {
  const i = Math.floor(k / n), j = k % n;
  let s = 0;
  for (let t = 0; t < n; t++) s += A[i * n + t] * B[t * n + j];
  return s;
});

test('eigenvalues: matrices of known spectra (similar to block-diagonal, companion, triangular)', () => {
  const rand = mulberry32(11);
  for (const spec of [
    [[3, 0], [-1, 0], [0.5, 0]],
    [[2, 0], [1, 1.5], [1, -1.5], [-0.25, 0], [0, 2], [0, -2]],
    [[0.1, 0], [-4, 0], [2, 3], [2, -3], [2, 0.5], [2, -0.5], [7, 0], [-1e-3, 0]],
  ]) {
    const n = spec.length;
    const B = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      const [a, b] = spec[i];
      if (b > 0) { B[i * n + i] = a; B[i * n + i + 1] = b; B[(i + 1) * n + i] = -b; B[(i + 1) * n + i + 1] = a; i++; } else B[i * n + i] = a;
    }
    const S = Float64Array.from({ length: n * n }, () => rand() * 2 - 1);
    const A = matmul(matmul(S, B, n), inverse(S, n), n);
    sameSpectrum(eigenvalues(A, n), spec, 1e-8, `n = ${n}`);
  }
  // companion matrix of (x − 1)(x − 2)(x + 3)(x² + 4) = x⁵ − x³ + ... built from its roots here
  const roots = [[1, 0], [2, 0], [-3, 0], [0, 2], [0, -2]];
  let poly = [[1, 0]];   // complex coefficients, highest first
  for (const [r, i] of roots) {
    const next = poly.map((c) => [...c]).concat([[0, 0]]);
    for (let k = 0; k < poly.length; k++) {
      next[k + 1][0] -= poly[k][0] * r - poly[k][1] * i;
      next[k + 1][1] -= poly[k][0] * i + poly[k][1] * r;
    }
    poly = next;
  }
  const n = roots.length;
  const C = new Float64Array(n * n);
  for (let j = 0; j < n; j++) C[j] = -poly[j + 1][0];
  for (let i = 1; i < n; i++) C[i * n + i - 1] = 1;
  sameSpectrum(eigenvalues(C, n), roots, 1e-9, 'companion');
  // triangular: the diagonal; 1 × 1
  sameSpectrum(eigenvalues([4, 9, 1, 0, -2, 5, 0, 0, 0.5], 3), [[4, 0], [-2, 0], [0.5, 0]], 1e-12, 'triangular');
  sameSpectrum(eigenvalues([-7], 1), [[-7, 0]], 0, '1 × 1');
  // a rotation by 90°: ±i; the zero matrix: zeros
  sameSpectrum(eigenvalues([0, -1, 1, 0], 2), [[0, 1], [0, -1]], 1e-15, 'rotation');
  sameSpectrum(eigenvalues(new Float64Array(16), 4), [[0, 0], [0, 0], [0, 0], [0, 0]], 0, 'zero');
});

test('eigenvalues: bad input is an MHAError naming what is wrong', () => {
  assert.throws(() => eigenvalues([1, 2, 3], 2), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && /n × n = 4/.test(e.message));
  assert.throws(() => eigenvalues([1, NaN, 0, 1], 2), (e) => e instanceof MHAError && e.code === 'NON_FINITE');
  assert.throws(() => eigenvalues([], 0), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT');
});

/** M = E·N₁·W_V^h·W_O^h·N_F·W_U [V, V] in float64 from the file's tensors (PyTorch layout [out, in]). */
function fullOV(parsed, layer, j) {
  const c = JSON.parse(parsed.metadata.config);
  const t = (n) => parsed.tensors[n]?.data ?? null;
  const V = c.vocab_size, d = c.d_model, h = c.num_heads, g = c.kv_heads ?? h, dk = d / h;
  const centre = c.norm !== 'rmsnorm';
  const p = `layers.${layer}.`;
  const E = t('tok_emb.weight'), Wv = t(`${p}attn.v_proj.weight`), Wo = t(`${p}attn.out_proj.weight`);
  const g1 = t(`${p}ln1.weight`), gf = t('ln_f.weight'), U = c.tied ? E : t('head.weight');
  const kvh = Math.floor(j / (h / g));
  const M = new Float64Array(V * V);
  for (let s = 0; s < V; s++) {
    const e = Array.from(E.subarray(s * d, (s + 1) * d));
    const mu = centre ? e.reduce((a, b) => a + b, 0) / d : 0;
    const x = e.map((v, i) => (v - mu) * g1[i]);
    const v = Array.from({ length: dk }, (_, k) => x.reduce((a, xi, i) => a + Wv[(kvh * dk + k) * d + i] * xi, 0));
    const o = Array.from({ length: d }, (_, i) => v.reduce((a, vk, k) => a + Wo[i * d + j * dk + k] * vk, 0));
    const mo = centre ? o.reduce((a, b) => a + b, 0) / d : 0;
    const y = o.map((oi, i) => (oi - mo) * gf[i]);
    for (let u = 0; u < V; u++) M[s * V + u] = y.reduce((a, yi, i) => a + U[u * d + i] * yi, 0);
  }
  return { M, V };
}

/** Real part of Σ λᵏ. */
function powerSum(ev, k) {
  let s = 0;
  for (let i = 0; i < ev.re.length; i++) {
    let r = 1, im = 0;
    for (let p = 0; p < k; p++) [r, im] = [r * ev.re[i] - im * ev.im[i], r * ev.im[i] + im * ev.re[i]];
    s += r;
  }
  return s;
}

test('the shipped h = 4 model: each head\'s d_k eigenvalues match the full V × V OV matrix built here (power traces, Σ|λ|)', () => {
  const bytes = fs.readFileSync(new URL('charlm-h4-s0.safetensors', modelsDir));
  const parsed = parseSafetensors(bytes);
  return mha.loadModel(bytes).then((lm) => {
    try {
      for (const l of [0, 1]) {
        const evs = ovEigenvalues(lm, l);
        for (const j of [0, 1, 3]) {
          const { M, V } = fullOV(parsed, l, j);
          let P = M;
          const scale = Math.max(...Array.from(evs[j].re, (r, i) => Math.hypot(r, evs[j].im[i])));
          for (let k = 1; k <= 4; k++) {
            if (k > 1) P = matmul(P, M, V);
            let tr = 0;
            for (let i = 0; i < V; i++) tr += P[i * V + i];
            const got = powerSum(evs[j], k);
            assert.ok(Math.abs(got - tr) <= 1e-6 * scale ** k * V, `layer ${l + 1} head ${j + 1}, tr(M^${k}) = ${tr}, Σλ^${k} = ${got}`);
          }
          const full = positivityOf(eigenvalues(M, V));
          const small = positivityOf(evs[j]);
          assert.ok(Math.abs(full.absSum - small.absSum) < 1e-6 * small.absSum, `Σ|λ| ${full.absSum} vs ${small.absSum}`);
          assert.ok(Math.abs(full.positivity - small.positivity) < 1e-6, `positivity ${full.positivity} vs ${small.positivity}`);
        }
      }
      // the heads that pass both induction tests copy by Elhage's measure too; layer 1's previous-token heads do not
      const pos = eigenPositivity(lm);
      const copying = copyingScores(lm);
      lm.heads.forEach((hd, i) => {
        if (inductionVerdict(hd, copying[i]) === 'induction') assert.ok(pos[i].positivity > 0.9, `${hd.layer + 1}:${hd.head + 1} ${pos[i].positivity}`);
        if (hd.layer === 0 && hd.type === 'previous-token') assert.ok(pos[i].positivity < 0, `${hd.layer + 1}:${hd.head + 1} ${pos[i].positivity}`);
      });
      assert.throws(() => ovEigenvalues(lm, 2), (e) => e instanceof MHAError && /layer must be an integer in \[0, 1\], got 2/.test(e.message));
      assert.throws(() => eigenPositivity({}), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT');
    } finally {
      lm.dispose();
    }
  });
});
