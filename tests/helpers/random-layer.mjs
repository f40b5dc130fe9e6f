// Random layers and the fast-check settings of the option suites (property-mods, property-rope).
import { mulberry32 } from '../../web/lib/src/index.js';

const RUNS = Number(process.env.FC_NUM_RUNS_MODS || process.env.FC_NUM_RUNS || 200);
const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
/** Runs of a suite's properties (FC_NUM_RUNS_MODS or FC_NUM_RUNS, default 200). */
export { RUNS };
/** fast-check parameters: the runs, the seed FC_SEED if set, and `extra`. */
export const fcParams = (extra = {}) => ({ numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), ...extra });

/** n uniform values in ±amp, Float32. */
export function values(rand, n, amp = 1) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (2 * rand() - 1) * amp;
  return a;
}

/**
 * A random layer (weights from a seed): d = dk·h, g = h / rep kv heads; kdim for cross-attention;
 * the RoPE and score-modifier options when given (alibi: true for the default slopes, or slopes).
 */
export function layerDesc({ dk, h, rep, seed, rope, softcap = null, alibi = null, window = null, kdim = null }) {
  const g = h / rep, d = dk * h, kd = kdim ?? d, rand = mulberry32(seed);
  const w = {
    wQ: values(rand, d * h * dk, 1 / Math.sqrt(d)), wK: values(rand, kd * g * dk, 1 / Math.sqrt(kd)),
    wV: values(rand, kd * g * dk, 1 / Math.sqrt(kd)), wO: values(rand, h * dk * d, 1 / Math.sqrt(h * dk)),
    bQ: values(rand, h * dk, 0.1), bK: values(rand, g * dk, 0.1), bV: values(rand, g * dk, 0.1), bO: values(rand, d, 0.1),
  };
  const weights = {
    wQ: { data: w.wQ, shape: [d, h * dk] }, wK: { data: w.wK, shape: [kd, g * dk] }, wV: { data: w.wV, shape: [kd, g * dk] },
    wO: { data: w.wO, shape: [h * dk, d] }, bQ: { data: w.bQ, shape: [h * dk] }, bK: { data: w.bK, shape: [g * dk] },
    bV: { data: w.bV, shape: [g * dk] }, bO: { data: w.bO, shape: [d] },
  };
  const opts = { dModel: d, numHeads: h, kvHeads: g, weights };
  if (kdim !== null) { opts.kDim = kd; opts.vDim = kd; }
  if (rope !== null && rope !== undefined) opts.rope = rope;
  if (softcap !== null) opts.softcap = softcap;
  if (alibi === true) opts.alibi = true;
  else if (alibi) opts.alibiSlopes = alibi;
  if (window) opts.window = window;
  return { d, h, g, dk, kd, w, opts, rope, softcap, window };
}
