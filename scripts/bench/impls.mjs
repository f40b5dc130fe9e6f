/**
 * The benchmark's implementations and timing, shared by the Node children (scripts/bench/child.mjs)
 * and the browser pages (scripts/bench/page.mjs): ours, onnxruntime-web and TensorFlow.js on the
 * same seeded weights and input, every peer checked against ours before timing, then timed in
 * interleaved rounds (the order rotates each round). Nothing here touches Node or the DOM: what
 * differs between the two (how each library is loaded, where its .wasm files are, the process's
 * RSS) comes in through setEnv().
 *
 * Every implementation takes the input as a Float32Array and hands back Float32Arrays (output,
 * and the attention weights when asked): the copy in and the copy out are part of every timing.
 * @module impls
 */
import { buildMhaOnnx } from './onnx-graph.mjs';
import { mulberry32 } from '../../web/lib/src/engine/weights.js';
import { peakModuleBytes, fmaSupported } from './peak.mjs';

/**
 * @typedef {object} BenchEnv
 * @property {() => Promise<{createMHA: Function}>} loadOurs the mha-wasm API module
 * @property {() => Promise<object>} loadOrt the onnxruntime-web module (wasm paths already set)
 * @property {() => Promise<{tf: object, wasmBackend: object, wasmDir: string}>} loadTfjs
 * @property {() => number|null} rssMB peak RSS of the process in MiB, or null (browser)
 * @property {(msg: string) => void} log progress
 */
let env = null;
let job = {};
/** Sets the environment (see BenchEnv) and the job whose id prefixes the log lines. */
export function setEnv(e, j = {}) { env = e; job = j; }
const log = (...a) => env.log(`  [${job.id || job.mode}] ${a.join(' ')}`);
const now = () => performance.now();

// ---------- data: deterministic weights (Xavier-uniform) and input ----------
const rng = mulberry32;
export function makeData({ T, d }) {
  const r = rng(1234 + T * 7 + d);
  const uni = (n, b) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = (2 * r() - 1) * b; return a; };
  const xb = Math.sqrt(6 / (2 * d));
  return {
    w: { wQ: uni(d * d, xb), wK: uni(d * d, xb), wV: uni(d * d, xb), wO: uni(d * d, xb), bQ: uni(d, 0.1), bK: uni(d, 0.1), bV: uni(d, 0.1), bO: uni(d, 0.1) },
    x: uni(T * d, 1.7),  // about unit variance, like a layer-normed activation
  };
}

// ---------- implementations ----------
// Each: {key, label, sync, prepare(nw) -> {run() -> {y, w?} | Promise<...>, release()}}

/** Ours at `threads` threads (default cfg.threads, else 1): key 'ours', or 'ours1' for the
 * one-thread reference a threaded run times beside it. */
export async function makeOurs({ T, d, h, causal, threads: cfgThreads = 1 }, data, threads = cfgThreads) {
  const mha = await (await env.loadOurs()).createMHA({ threads });
  const M = (a, rows, cols) => ({ data: a, shape: cols ? [rows, cols] : [rows] });
  const { w } = data;
  const layer = mha.createLayer({
    numHeads: h,
    weights: { wQ: M(w.wQ, d, d), wK: M(w.wK, d, d), wV: M(w.wV, d, d), wO: M(w.wO, d, d), bQ: M(w.bQ, d), bK: M(w.bK, d), bV: M(w.bV, d), bO: M(w.bO, d) },
  });
  const x = { data: data.x, shape: [T, d] };
  return {
    key: threads === cfgThreads ? 'ours' : 'ours1',
    label: `mha-wasm (tier ${mha.info.tier}, ${mha.info.threads} thread${mha.info.threads > 1 ? 's' : ''}${mha.info.tile ? `, ${mha.info.tile} tile` : ''})`,
    tier: mha.info.tier, threads: mha.info.threads, sync: true, mha, layer,
    prepare(nw) {
      const opts = { causal, needWeights: nw };
      return {
        run() { const r = layer.forward(x, opts); return { y: r.output.data, w: r.weights && r.weights.data }; },
        release() {},
      };
    },
    // forward on a shorter input with the same layer (tiers up the wasm code before a long call)
    warm(Tw) { const xs = { data: data.x.subarray(0, Tw * d), shape: [Tw, d] }; layer.forward(xs, { causal, needWeights: false }); },
  };
}

export async function loadOrt(threads = 1) {
  const ort = await env.loadOrt();
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;  // ignored by 1.2x+ (the only wasm build is the SIMD one); kept for older versions
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  return ort;
}

export async function makeOrtSession(ort, { T, d, h, causal, threads = 1 }, data, style, nw) {
  const bytes = buildMhaOnnx({ T, d, h, causal, needWeights: nw, style, w: data.w });
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential', intraOpNumThreads: threads,
  });
  const feeds = { x: new ort.Tensor('float32', data.x, [1, T, d]) };
  return {
    style,
    async run() {
      const out = await session.run(feeds);
      return { y: out.y.data, w: out.w && out.w.data };
    },
    release() { return session.release(); },
  };
}

const ORT_STYLE_NAMES = { torch: 'PyTorch-style graph', mha: 'com.microsoft.MultiHeadAttention', attn: 'com.microsoft.Attention' };

async function makeOrt(cfg, data, { styles } = {}) {
  const ort = await loadOrt(cfg.threads ?? 1);
  return {
    key: 'ort', label: `onnxruntime-web ${ort.env.versions.web}`, sync: false, ort,
    // nw = true needs the weights as a graph output: only the PyTorch-style graph has them.
    candidates: (nw) => (nw ? ['torch'] : (styles || ['torch', 'mha', 'attn'])),
    prepareStyle: (style, nw) => makeOrtSession(ort, cfg, data, style, nw),
  };
}

async function makeTfjs({ T, d, h, causal, threads = 1 }, data) {
  const { tf, wasmBackend, wasmDir } = await env.loadTfjs();
  wasmBackend.setWasmPaths(wasmDir);
  wasmBackend.setThreadsCount(threads);
  await tf.setBackend('wasm');
  await tf.ready();
  if (!tf.env().getBool('WASM_HAS_SIMD_SUPPORT')) throw new Error('tfjs wasm backend runs without SIMD');
  const { w } = data;
  const dk = d / h;
  const scale = 1 / Math.sqrt(dk);
  // the same fused-QKV, scale-folded weights the ONNX graph gets
  const wQKV = new Float32Array(d * 3 * d);
  for (let r = 0; r < d; r++) {
    for (let c = 0; c < d; c++) {
      wQKV[r * 3 * d + c] = w.wQ[r * d + c] * scale;
      wQKV[r * 3 * d + d + c] = w.wK[r * d + c];
      wQKV[r * 3 * d + 2 * d + c] = w.wV[r * d + c];
    }
  }
  const tW = tf.tensor2d(wQKV, [d, 3 * d]);
  const tB = tf.tensor1d(Float32Array.from([...w.bQ.map((v) => v * scale), ...w.bK, ...w.bV]));
  const tWO = tf.tensor2d(w.wO, [d, d]);
  const tBO = tf.tensor1d(w.bO);
  let tMask = null;
  if (causal) {
    const m = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) m[i * T + j] = -Infinity;
    tMask = tf.tensor2d(m, [T, T]);
  }
  const heads = (t) => tf.transpose(tf.reshape(t, [T, h, dk]), [1, 0, 2]);  // [h, T, dk]
  return {
    key: 'tfjs', label: `tfjs ${tf.version_core} wasm${threads > 1 ? `, ${wasmBackend.getThreadsCount()} thread(s) granted of ${threads}` : ''}`, sync: true, tf,
    prepare(nw) {
      return {
        run() {
          const x = tf.tensor2d(data.x, [T, d]);
          const [y, a] = tf.tidy(() => {
            const qkv = tf.add(tf.matMul(x, tW), tB);
            const [q, k, v] = tf.split(qkv, 3, 1);
            let s = tf.matMul(heads(q), heads(k), false, true);  // [h, T, T]
            if (tMask) s = tf.add(s, tMask);
            const att = tf.softmax(s);
            const o = tf.reshape(tf.transpose(tf.matMul(att, heads(v)), [1, 0, 2]), [T, d]);
            return [tf.add(tf.matMul(o, tWO), tBO), nw ? att : tf.keep(tf.scalar(0))];
          });
          const out = { y: y.dataSync() };
          if (nw) out.w = a.dataSync();
          x.dispose(); y.dispose(); a.dispose();
          return out;
        },
        release() {},
      };
    },
  };
}

// ---------- checking and timing ----------
function compare(ref, got, what) {
  if (!got) throw new Error(`${what}: missing`);
  if (got.length !== ref.length) throw new Error(`${what}: ${got.length} values, ours has ${ref.length}`);
  let maxDiff = 0, maxRef = 0;
  for (let i = 0; i < ref.length; i++) {
    const diff = Math.abs(ref[i] - got[i]);
    if (Number.isNaN(diff)) maxDiff = Infinity;
    else if (diff > maxDiff) maxDiff = diff;
    const a = Math.abs(ref[i]);
    if (a > maxRef) maxRef = a;
  }
  return { maxAbs: maxDiff, rel: maxDiff / Math.max(maxRef, 1e-30) };
}
const TOL = 1e-3;
function check(ref, got, label, nw) {
  const out = { y: compare(ref.y, got.y, `${label} output`) };
  if (nw) out.w = compare(ref.w, got.w, `${label} weights`);
  const bad = Object.entries(out).filter(([, c]) => !(c.rel <= TOL));
  if (bad.length) {
    throw new Error(`CHECK FAILED: ${label} differs from ours: ${bad.map(([k, c]) => `${k === 'y' ? 'output' : 'weights'} max |diff| = ${c.maxAbs.toExponential(3)} (${c.rel.toExponential(3)} of max |ours|) > ${TOL} relative`).join('; ')}`);
  }
  return out;
}

async function callN(impl, runner, n) {
  const t0 = now();
  if (impl.sync) { for (let i = 0; i < n; i++) runner.run(); } else { for (let i = 0; i < n; i++) await runner.run(); }
  return (now() - t0) / n;
}
function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => { const i = (s.length - 1) * p; const lo = Math.floor(i); return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (i - lo); };
  return { median: q(0.5), q1: q(0.25), q3: q(0.75), min: s[0], max: s[s.length - 1], n: s.length };
}
/** One line of an error, without build paths and C++ boilerplate. */
const shortErr = (e) => String((e && e.message) || e).replace(/\s+/g, ' ').replace(/\/\S*\/onnxruntime\//g, '')
  .replace(/static void SafeIntExceptionHandler<[^>]*>::/, '').trim().slice(0, 220);

/** Per-call ms of runner, from batches of calls that together last at least minMs. */
async function perCall(impl, runner, minMs) {
  let n = 1;
  for (;;) {
    const t0 = now();
    if (impl.sync) { for (let i = 0; i < n; i++) runner.run(); } else { for (let i = 0; i < n; i++) await runner.run(); }
    const ms = now() - t0;
    if (ms >= minMs || n >= 1 << 20) return ms / n;
    n = Math.min(n * 8, Math.max(n * 2, Math.ceil(n * minMs / Math.max(ms, 1e-3))));
  }
}

async function timeRounds(entries, { budget, minRounds, maxRounds, minSampleMs }) {
  // warm-up (the check call was the first call of each) and calibration of calls per sample
  for (const e of entries) {
    const ms = await perCall(e.impl, e.runner, Math.max(minSampleMs / 2, 1));
    e.n = Math.max(1, Math.round(minSampleMs / ms));
    e.samples = [];
  }
  let roundMs = 0;
  const t0 = now();
  for (let r = 0; ; r++) {
    const tr = now();
    for (let j = 0; j < entries.length; j++) {
      const e = entries[(r + j) % entries.length];
      e.samples.push(await callN(e.impl, e.runner, e.n));
    }
    roundMs = now() - tr;
    const done = r + 1;
    if (done >= maxRounds) break;
    if (done >= minRounds && now() - t0 + roundMs > budget * 1000) break;
  }
  return entries.map((e) => ({ key: e.impl.key, callsPerSample: e.n, ...stats(e.samples) }));
}

/**
 * The peak loop as one more entry of the timed rounds: f32x4.relaxed_madd chains when ours runs
 * the relaxed-simd tier (else mul + add), about 2 ms per call. Timed between the implementations,
 * it moves with the machine's speed, so "of peak" compares numbers measured in the same seconds.
 */
function peakEntry(fma) {
  const [variant, K, U] = fma && fmaSupported() ? ['fma', 12, 2] : ['split', 12, 2];
  const { run } = new WebAssembly.Instance(new WebAssembly.Module(peakModuleBytes(variant, K, U))).exports;
  run(1000);
  let iters = 1000;
  for (;;) {
    const t0 = now(); run(iters); const ms = now() - t0;
    if (ms > 1) { iters = Math.max(1000, Math.round(iters * 2 / ms)); break; }
    iters *= 4;
  }
  let sink = 0;
  return {
    impl: { key: 'peak', sync: true }, variant: `${variant} K=${K}`, flops: 8 * K * U * iters,
    runner: { run() { sink += run(iters); return sink; }, release() {} },
  };
}

/**
 * Checks every candidate ONNX graph of onnxruntime-web against ours (`ref`) and adds each one that
 * runs to the timed `entries` as `ort:<style>`; all of them run in the timed rounds (interleaved
 * with the other implementations) and keepFastestOrt reports the one with the lowest median (a
 * choice from a few calls before the rounds picked a slower graph when one call hit a hiccup).
 * Fills v.ortStyles (each style with its error, if any) and v.checks; when no graph runs,
 * v.errors.ort. Throws the CHECK FAILED error of a graph whose result differs from ours.
 */
async function addOrtEntries(p, nw, ref, v, entries) {
  const tried = [];
  for (const style of p.candidates(nw)) {
    let s = null;
    try {
      s = await p.prepareStyle(style, nw);
      const got = await s.run();
      const c = check(ref, got, `onnxruntime-web (${ORT_STYLE_NAMES[style]})`, nw);
      tried.push({ style, check: c, runner: s });
      log(`ort ${style}: ok, max|diff| ${c.y.maxAbs.toExponential(2)}`);
    } catch (e) {
      if (String(e.message).startsWith('CHECK FAILED')) throw e;
      tried.push({ style, error: shortErr(e) });
      log(`ort ${style}: cannot run: ${tried.at(-1).error}`);
      if (s) await s.release();
    }
  }
  v.ortStyles = tried.map(({ style, error }) => ({ style, error }));
  const ok = tried.filter((t) => t.runner);
  if (!ok.length) { v.errors.ort = tried.map((t) => `${t.style}: ${t.error}`).join('; '); return; }
  for (const t of ok) {
    v.checks[`ort:${t.style}`] = t.check;
    entries.push({ impl: { ...p, key: `ort:${t.style}` }, runner: t.runner });
  }
}

/**
 * Checks a synchronous peer (TensorFlow.js) against ours (`ref`) and adds it to the timed
 * `entries`; one that cannot run leaves its reason in v.errors[p.key]. Throws the CHECK FAILED
 * error of a result that differs from ours.
 */
function addPeerEntry(p, nw, ref, v, entries) {
  try {
    const r = p.prepare(nw);
    const got = r.run();
    v.checks[p.key] = check(ref, got, p.label, nw);
    log(`${p.key}: ok, max|diff| ${v.checks[p.key].y.maxAbs.toExponential(2)}`);
    entries.push({ impl: p, runner: r });
  } catch (e) {
    if (String(e.message).startsWith('CHECK FAILED')) throw e;
    v.errors[p.key] = shortErr(e);
    log(`${p.key}: cannot run: ${v.errors[p.key]}`);
  }
}

/**
 * Of the ORT graphs' rows (`ort:<style>`), keeps the fastest (lowest median) as the row `ort`, its
 * check as v.checks.ort and its style as v.ortStyle, and lists every graph's median in
 * v.ortStyles[].ms; the other graphs' checks are dropped (their rows are filtered out after).
 */
function keepFastestOrt(v, rows) {
  const ortRows = rows.filter((r) => r.key.startsWith('ort:'));
  if (!ortRows.length) return;
  const best = ortRows.reduce((a, b) => (b.median < a.median ? b : a));
  for (const t of v.ortStyles) t.ms = ortRows.find((r) => r.key === `ort:${t.style}`)?.median;
  v.ortStyle = best.key.slice(4);
  v.checks.ort = v.checks[best.key];
  for (const r of ortRows) delete v.checks[r.key];
  best.key = 'ort';
}

// ---------- modes ----------
/**
 * The timing mode: for each needWeights setting in cfg.nws, ours (and, threaded, ours on one
 * thread) and the peers in cfg.peers are checked against ours, then timed in interleaved rounds
 * with the peak loop (timeRounds, peakEntry).
 * @returns {Promise<object>} {id, labels, variants: [{nw, checks, errors, ortStyles, ortStyle,
 *   roundPeak, rows}], maxRSS, heapMB}; rows: one per implementation, with the stats of its samples
 */
export async function timing(cfg) {
  const data = makeData(cfg);
  const ours = await makeOurs(cfg, data);
  // a threaded run also times ours on one thread (the scaling), interleaved with the rest
  const ours1 = (cfg.threads ?? 1) > 1 ? await makeOurs(cfg, data, 1) : null;
  const peers = [];
  const setupErrors = {};
  for (const [key, make] of [['ort', makeOrt], ['tfjs', makeTfjs]]) {
    if (!cfg.peers.includes(key)) continue;
    try { peers.push(await make(cfg, data)); } catch (e) { setupErrors[key] = `setup: ${shortErr(e)}`; log(`${key}: ${setupErrors[key]}`); }
  }
  const out = { id: cfg.id, labels: { ours: ours.label, ...(ours1 ? { ours1: ours1.label } : {}) }, variants: [] };
  for (const p of peers) out.labels[p.key] = p.label;
  for (const nw of cfg.nws) {
    log(`needWeights=${nw}: checking`);
    const v = { nw, checks: {}, errors: { ...setupErrors }, ortStyles: null, ortStyle: null, rows: [] };
    const oursRunner = ours.prepare(nw);
    const ref = oursRunner.run();
    const entries = [{ impl: ours, runner: oursRunner }];
    if (ours1) {
      const r1 = ours1.prepare(nw);
      v.checks.ours1 = check(ref, r1.run(), ours1.label, nw);
      entries.push({ impl: ours1, runner: r1 });
    }
    for (const p of peers) {
      if (p.key === 'ort') await addOrtEntries(p, nw, ref, v, entries);
      else addPeerEntry(p, nw, ref, v, entries);
    }
    const pk = peakEntry(ours.tier === 'relaxed-simd');
    entries.push(pk);
    log(`needWeights=${nw}: timing ${entries.map((e) => e.impl.key).join(', ')}`);
    const allRows = await timeRounds(entries, cfg);
    entries.pop();
    const peakRow = allRows.find((r) => r.key === 'peak');
    v.roundPeak = { variant: pk.variant, gflops: pk.flops / (peakRow.median / 1000) / 1e9 };
    const rows = allRows.filter((r) => r.key !== 'peak');
    for (const e of entries) if (e.impl !== ours && e.impl !== ours1) await e.runner.release();
    keepFastestOrt(v, rows);
    v.rows = rows.filter((r) => !r.key.startsWith('ort:'));
    out.variants.push(v);
  }
  out.maxRSS = env.rssMB();
  out.heapMB = ours.mha.memory().heapBytes / 2 ** 20;
  return out;
}

/** W4: ours first (its RSS and heap before any peer is loaded), then one try of each peer. */
export async function long(cfg) {
  const data = makeData(cfg);
  const flops = 8 * cfg.T * cfg.d * cfg.d + 4 * cfg.T * cfg.T * cfg.d;
  const ours = await makeOurs(cfg, data);
  // tier the wasm code up on shorter inputs, then estimate the long call from the speed at Tw
  const Tw = 1024;
  ours.warm(256); ours.warm(Tw);
  const t0 = now(); ours.warm(Tw); const msW = now() - t0;
  const est = msW * flops / (8 * Tw * cfg.d * cfg.d + 4 * Tw * Tw * cfg.d);
  const n = Math.max(1, Math.min(cfg.maxRounds, Math.floor(cfg.budget * 1000 / est)));
  log(`ours: ${n} call(s), about ${(est / 1000).toFixed(0)} s each`);
  const runner = ours.prepare(false);
  const samples = [];
  let ref = null;
  for (let i = 0; i < n; i++) {
    const s = now();
    ref = runner.run();
    samples.push(now() - s);
  }
  const oursRSS = env.rssMB();
  // the wasm heap never shrinks: its size now is the high-water mark of the calls above
  const heapMB = ours.mha.memory().heapBytes / 2 ** 20;
  const out = { id: cfg.id, labels: { ours: ours.label }, oursRSS, heapMB, variants: [] };
  const v = { nw: false, checks: {}, errors: {}, rows: [{ key: 'ours', callsPerSample: 1, ...stats(samples) }] };
  // the peers: one try each, after ours (so that ours' RSS above is ours alone)
  for (const key of cfg.peers) {
    try {
      let label, r, impl;
      if (key === 'ort') {
        impl = await makeOrt(cfg, data, { styles: ['mha'] });
        r = await impl.prepareStyle('mha', false);
        v.ortStyle = 'mha';
      } else {
        impl = await makeTfjs(cfg, data);
        r = impl.prepare(false);
      }
      label = impl.label;
      out.labels[key] = label;
      const s = now();
      const got = await r.run();
      const ms = now() - s;
      v.checks[key] = check(ref, got, label, false);
      v.rows.push({ key, callsPerSample: 1, ...stats([ms]) });
    } catch (e) {
      if (String(e.message).startsWith('CHECK FAILED')) throw e;
      v.errors[key] = shortErr(e);
      log(`${key}: cannot run: ${v.errors[key]}`);
    }
  }
  out.variants.push(v);
  return out;
}
