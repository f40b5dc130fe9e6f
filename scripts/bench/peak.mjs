/**
 * Measures two peaks of f32 wasm SIMD throughput on this machine, single thread, with hand-assembled
 * wasm modules (no toolchain needed) whose loops run K independent chains:
 *
 *   acc_k = acc_k * m + c              ('chain': f32x4.mul then f32x4.add, dependent)
 *   p_k = p_k * m ; s_k = s_k + c      ('split': K/2 mul chains and K/2 add chains)
 *   acc_k = relaxed_madd(acc_k, m, c)  ('fma': one f32x4.relaxed_madd, a fused multiply-add under V8
 *                                        where the CPU has FMA; only where the engine validates it)
 * Each loop iteration does K·U multiply-adds = 8·K·U FLOPs (4 lanes × 2). The best variant (by the
 * median of its calls) is each peak: the bench reports GEMM-bound workloads as fractions of them.
 * Runs in Node and in browsers (no Node APIs).
 * @module peak
 */

const uleb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const sleb = (n) => { const out = []; for (;;) { const b = n & 0x7f; n >>= 7; if ((n === 0 && !(b & 0x40)) || (n === -1 && (b & 0x40))) { out.push(b); return out; } out.push(b | 0x80); } };
const f32 = (x) => [...new Uint8Array(Float32Array.of(x).buffer)];
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const str = (s) => { const b = new TextEncoder().encode(s); return [...uleb(b.length), ...b]; };

const I = {
  get: (i) => [0x20, ...uleb(i)], set: (i) => [0x21, ...uleb(i)], tee: (i) => [0x22, ...uleb(i)],
  f32c: (x) => [0x43, ...f32(x)], i32c: (x) => [0x41, ...sleb(x)], i32sub: [0x6b],
  loop: [0x03, 0x40], brIf: (d) => [0x0d, ...uleb(d)], end: [0x0b],
  splat: [0xfd, ...uleb(0x13)], extract0: [0xfd, ...uleb(0x1f), 0], add: [0xfd, ...uleb(0xe4)], mul: [0xfd, ...uleb(0xe6)],
  madd: [0xfd, ...uleb(0x105)],  // f32x4.relaxed_madd (a, b, c) -> a·b + c
};

/**
 * @param {'chain'|'split'|'fma'} variant
 * @param {number} K accumulators (v128 locals)
 * @param {number} U unroll of the loop body
 * @returns {Uint8Array} a wasm module exporting run(iterations: i32) -> f32
 */
export function peakModuleBytes(variant, K, U) {
  // locals: 0 = n (param), 1..K = accumulators, K+1 = m, K+2 = c
  const M = K + 1, C = K + 2;
  const body = [];
  body.push(...I.f32c(0.9999999), ...I.splat, ...I.set(M));
  body.push(...I.f32c(1e-7), ...I.splat, ...I.set(C));
  for (let k = 0; k < K; k++) body.push(...I.f32c(1 + k / 64), ...I.splat, ...I.set(1 + k));
  body.push(...I.loop);
  for (let u = 0; u < U; u++) {
    for (let k = 0; k < K; k++) {
      const a = 1 + k;
      if (variant === 'fma') {
        body.push(...I.get(a), ...I.get(M), ...I.get(C), ...I.madd, ...I.set(a));
      } else if (variant === 'chain') {
        body.push(...I.get(a), ...I.get(M), ...I.mul, ...I.get(C), ...I.add, ...I.set(a));
      } else if (k % 2 === 0) {
        body.push(...I.get(a), ...I.get(M), ...I.mul, ...I.set(a));  // a mul chain
      } else {
        body.push(...I.get(a), ...I.get(C), ...I.add, ...I.set(a));  // an add chain
      }
    }
    if (variant === 'split') {  // a split body does K ops per pass: run it twice for K pairs
      for (let k = 0; k < K; k++) {
        const a = 1 + k;
        body.push(...I.get(a), ...(k % 2 === 0 ? I.get(M) : I.get(C)), ...(k % 2 === 0 ? I.mul : I.add), ...I.set(a));
      }
    }
  }
  body.push(...I.get(0), ...I.i32c(1), ...I.i32sub, ...I.tee(0), ...I.brIf(0), ...I.end);
  body.push(...I.get(1));
  for (let k = 1; k < K; k++) body.push(...I.get(1 + k), ...I.add);
  body.push(...I.extract0, ...I.end);
  const locals = [1, ...uleb(K + 2), 0x7b];  // one group of K + 2 v128 locals
  const fn = [...locals, ...body];
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]),         // type: (i32) -> f32
    ...section(3, [1, 0]),                                // one function of type 0
    ...section(7, [1, ...str('run'), 0x00, 0]),           // export "run" = func 0
    ...section(10, [1, ...uleb(fn.length), ...fn]),       // its body
  ];
  return new Uint8Array(bytes);
}

/** True when this engine validates the FMA peak module (relaxed SIMD). */
export function fmaSupported() {
  try { return WebAssembly.validate(peakModuleBytes('fma', 2, 1)); } catch { return false; }
}

/**
 * Runs the variants, interleaved, and returns the best GFLOP/s seen for mul + add and for FMA.
 * @param {{seconds?: number}} [o] rough time budget
 * @returns {{gflops: number, best: string, fma: {gflops: number, best: string}|null,
 *   variants: Array<{name: string, gflops: number}>}} gflops/best: the mul + add peak
 */
export function measurePeak({ seconds = 3 } = {}) {
  const configs = [['chain', 8, 4], ['chain', 10, 4], ['chain', 12, 2], ['split', 8, 4], ['split', 12, 2]];
  if (fmaSupported()) configs.push(['fma', 8, 4], ['fma', 10, 4], ['fma', 12, 2]);
  const variants = configs.map(([v, K, U]) => {
    const { run } = new WebAssembly.Instance(new WebAssembly.Module(peakModuleBytes(v, K, U))).exports;
    return { name: `${v} K=${K}`, kind: v === 'fma' ? 'fma' : 'mulAdd', run, flopsPerIter: 8 * K * U, gflops: 0 };
  });
  for (const v of variants) v.run(1000);  // compile (tier up) before timing
  // calibrate: iterations for ~20 ms per call: short enough that the best call is rarely
  // preempted, long enough for a browser's coarse performance.now() (100 µs without
  // cross-origin isolation; the best of many calls would otherwise pick rounding luck)
  const cal = variants[0];
  let iters = 100000;
  for (;;) {
    const t0 = performance.now(); cal.run(iters); const ms = performance.now() - t0;
    if (ms > 10) { iters = Math.max(1000, Math.round(iters * 20 / ms)); break; }
    iters *= 4;
  }
  // Each variant's figure is the median of its calls, not the best: a browser page's clock can
  // stall for a moment, and one call timed short would set a peak no CPU can reach.
  const deadline = performance.now() + seconds * 1000;
  let sink = 0;
  for (const v of variants) v.samples = [];
  do {
    for (const v of variants) {
      const t0 = performance.now();
      sink += v.run(iters);
      const s = (performance.now() - t0) / 1000;
      v.samples.push((v.flopsPerIter * iters) / s / 1e9);
    }
  } while (performance.now() < deadline || variants[0].samples.length < 5);
  for (const v of variants) v.gflops = v.samples.sort((a, b) => a - b)[v.samples.length >> 1];
  if (!Number.isFinite(sink)) throw new Error('peak kernel produced a non-finite sum');
  const bestOf = (kind) => {
    const vs = variants.filter((v) => v.kind === kind);
    return vs.length ? vs.reduce((a, b) => (b.gflops > a.gflops ? b : a)) : null;
  };
  const ma = bestOf('mulAdd'), fma = bestOf('fma');
  return {
    gflops: ma.gflops, best: ma.name,
    fma: fma && { gflops: fma.gflops, best: fma.name },
    variants: variants.map(({ name, gflops }) => ({ name, gflops })),
  };
}

if (typeof process !== 'undefined' && import.meta.url === `file://${process.argv[1]}`) {
  const r = measurePeak({ seconds: Number(process.argv[2] || 3) });
  console.log(JSON.stringify(r));
}
