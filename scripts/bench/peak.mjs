/**
 * Measures the peak f32 throughput of wasm SIMD on this machine, single thread: a hand-assembled
 * wasm module (no toolchain needed) whose loop runs K independent chains of f32x4 multiply + add
 * (no FMA: relaxed SIMD is not on by default in Node 20). The best of a few variants and repetitions
 * is the peak: the bench reports every GEMM-bound workload as a fraction of it.
 *
 *   acc_k = acc_k * m + c            ('chain': the mul and the add of a chain are dependent)
 *   p_k = p_k * m ; s_k = s_k + c    ('split': K/2 mul chains and K/2 add chains)
 * Each loop iteration of either variant does K·U mul/add pairs = 8·K·U FLOPs (4 lanes × 2 ops).
 * @module peak
 */

const uleb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
const sleb = (n) => { const out = []; for (;;) { const b = n & 0x7f; n >>= 7; if ((n === 0 && !(b & 0x40)) || (n === -1 && (b & 0x40))) { out.push(b); return out; } out.push(b | 0x80); } };
const f32 = (x) => [...new Uint8Array(Float32Array.of(x).buffer)];
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const str = (s) => [...uleb(s.length), ...Buffer.from(s, 'utf8')];

const I = {
  get: (i) => [0x20, ...uleb(i)], set: (i) => [0x21, ...uleb(i)], tee: (i) => [0x22, ...uleb(i)],
  f32c: (x) => [0x43, ...f32(x)], i32c: (x) => [0x41, ...sleb(x)], i32sub: [0x6b],
  loop: [0x03, 0x40], brIf: (d) => [0x0d, ...uleb(d)], end: [0x0b],
  splat: [0xfd, ...uleb(0x13)], extract0: [0xfd, ...uleb(0x1f), 0], add: [0xfd, ...uleb(0xe4)], mul: [0xfd, ...uleb(0xe6)],
};

/**
 * @param {'chain'|'split'} variant
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
      if (variant === 'chain') {
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

/**
 * Runs the variants and returns the best GFLOP/s seen.
 * @param {{seconds?: number}} [o] rough time budget
 * @returns {{gflops: number, best: string, variants: Array<{name: string, gflops: number}>}}
 */
export function measurePeak({ seconds = 3 } = {}) {
  const configs = [['chain', 8, 4], ['chain', 10, 4], ['chain', 12, 2], ['split', 8, 4], ['split', 12, 2]];
  const variants = configs.map(([v, K, U]) => {
    const { run } = new WebAssembly.Instance(new WebAssembly.Module(peakModuleBytes(v, K, U))).exports;
    return { name: `${v} K=${K}`, run, flopsPerIter: 8 * K * U, gflops: 0 };
  });
  for (const v of variants) v.run(1000);  // compile (tier up) before timing
  // calibrate: iterations for ~4 ms per call (short bursts: the best one is rarely preempted)
  const cal = variants[0];
  let iters = 100000;
  for (;;) {
    const t0 = performance.now(); cal.run(iters); const ms = performance.now() - t0;
    if (ms > 10) { iters = Math.max(1000, Math.round(iters * 4 / ms)); break; }
    iters *= 4;
  }
  const deadline = performance.now() + seconds * 1000;
  let sink = 0;
  do {
    for (const v of variants) {
      const t0 = performance.now();
      sink += v.run(iters);
      const s = (performance.now() - t0) / 1000;
      v.gflops = Math.max(v.gflops, (v.flopsPerIter * iters) / s / 1e9);
    }
  } while (performance.now() < deadline);
  if (!Number.isFinite(sink)) throw new Error('peak kernel produced a non-finite sum');
  const best = variants.reduce((a, b) => (b.gflops > a.gflops ? b : a));
  return { gflops: best.gflops, best: best.name, variants: variants.map(({ name, gflops }) => ({ name, gflops })) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = measurePeak({ seconds: Number(process.argv[2] || 3) });
  console.log(JSON.stringify(r));
}
