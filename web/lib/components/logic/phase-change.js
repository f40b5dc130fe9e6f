// The phase change, replayed: the training checkpoints of one model in one file
// (docs/trained-models.md, "The phase-change checkpoints"), each checkpoint given back as an ordinary model file
// that mha.loadModel reads, and the figures the lesson states about them. Pure: no DOM, no Lit.
import { MHAError } from '../../src/index.js';

/** The `__metadata__.format` of a checkpoints file (its checkpoints are `mha-wasm.charlm/1` models). */
export const CHECKPOINTS_FORMAT = 'mha-wasm.charlm/1';

/** Tensor names of a checkpoints file: "step" + the step, zero-padded, "." + the model's tensor name. */
const STEP_NAME = /^step(\d+)\.(.+)$/;

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', msg);

/**
 * Reads a checkpoints file: a safetensors file whose tensors are named "step00600.layers.0.ln1.weight"
 * (the model's tensor names behind the step) and whose `__metadata__.checkpoints` is the JSON list
 * of what training measured at each step (`{step, heldoutBpc, firstCopyBpc, secondCopyBpc,
 * previous, induction, inductionProse, heads}`: held-out bits per character, the bits per
 * character on the first and second copy of the probes' random-letter spans written twice, the
 * best head's previous-token and induction scores, and every head's analysis). Only the header
 * is parsed here: a checkpoint's bytes are copied out when `file(step)` asks for them.
 * @param {Uint8Array|ArrayBuffer} bytes the whole file
 * @returns {{metadata: Object<string, string>, table: object[], steps: number[], file: (step: number) => Uint8Array}}
 *   table and steps in step order; `file(step)` is that checkpoint as a model file of its own
 *   (docs/trained-models.md's format: the same metadata, `heads` that checkpoint's analysis, no
 *   `checkpoints`), for mha.loadModel
 * @throws {MHAError} INVALID_ARGUMENT naming what is wrong: not safetensors, another format, no
 *   `checkpoints` list, a step with no tensors or tensors of a step the list does not name,
 *   `file()` of a step the file does not hold
 */
export function readCheckpoints(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (u8.length < 8) throw invalid(`readCheckpoints: bytes must be a safetensors file, got ${u8.length} bytes`);
  const n = Number(new DataView(u8.buffer, u8.byteOffset, 8).getBigUint64(0, true));
  if (!(n > 0 && 8 + n <= u8.length)) throw invalid(`readCheckpoints: header length ${n} does not fit the file's ${u8.length} bytes`);
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(u8.subarray(8, 8 + n)));
  } catch (e) {
    throw invalid(`readCheckpoints: the header is not JSON (${e.message})`);
  }
  const metadata = header.__metadata__ ?? {};
  if (metadata.format !== CHECKPOINTS_FORMAT) {
    throw invalid(`readCheckpoints: __metadata__.format must be "${CHECKPOINTS_FORMAT}", got ${JSON.stringify(metadata.format ?? null)}`);
  }
  let table;
  try {
    table = JSON.parse(metadata.checkpoints ?? 'null');
  } catch (e) {
    throw invalid(`readCheckpoints: __metadata__.checkpoints is not JSON (${e.message})`);
  }
  if (!Array.isArray(table) || table.length === 0) throw invalid('readCheckpoints: __metadata__.checkpoints must be a non-empty list (a model file without checkpoints?)');
  table = [...table].sort((a, b) => a.step - b.step);
  const steps = table.map((c) => c.step);
  const byStep = new Map(steps.map((s) => [s, []]));
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const m = STEP_NAME.exec(name);
    const list = m ? byStep.get(Number(m[1])) : undefined;
    if (!list) throw invalid(`readCheckpoints: tensor ${name} is not "step<N>.<name>" of a step in __metadata__.checkpoints (${steps.join(', ')})`);
    list.push([m[2], e]);
  }
  for (const [s, list] of byStep) if (list.length === 0) throw invalid(`readCheckpoints: step ${s} has no tensors`);
  const base = 8 + n;
  const { checkpoints: _, ...common } = metadata;
  const file = (step) => {
    const list = byStep.get(step);
    if (!list) throw invalid(`readCheckpoints: step must be one of ${steps.join(', ')}, got ${step}`);
    const row = table[steps.indexOf(step)];
    const out = { __metadata__: { ...common, heads: JSON.stringify(row.heads ?? []) } };
    let offset = 0;
    const parts = [];
    for (const [name, e] of list) {
      const [a, b] = e.data_offsets;
      if (!(a >= 0 && b >= a && base + b <= u8.length)) throw invalid(`readCheckpoints: tensor step${step}.${name} lies outside the file`);
      parts.push(u8.subarray(base + a, base + b));
      out[name] = { dtype: e.dtype, shape: e.shape, data_offsets: [offset, offset + (b - a)] };
      offset += b - a;
    }
    const json = new TextEncoder().encode(JSON.stringify(out));
    const pad = (8 - (json.length % 8)) % 8;
    const head = new Uint8Array(8 + json.length + pad).fill(0x20, 8 + json.length);
    new DataView(head.buffer).setBigUint64(0, BigInt(json.length + pad), true);
    head.set(json, 8);
    const result = new Uint8Array(head.length + offset);
    result.set(head, 0);
    let at = head.length;
    for (const p of parts) { result.set(p, at); at += p.length; }
    return result;
  };
  return { metadata, table, steps, file };
}

/**
 * The phase change in a checkpoints table: where the best induction score rose fastest. The rise
 * is measured between the scores' smallest and largest values over training; `from` is the last
 * checkpoint before the score first reaches 10 % of the rise, `to` the first at or after 90 %.
 * Each end carries its step, best induction and previous-token scores and both copies' bits per
 * character; `steepest` is the pair of neighbouring checkpoints with the largest rise per step.
 * @param {object[]} table readCheckpoints().table (step order)
 * @returns {{from: object, to: object, steepest: {from: object, to: object}, low: number, high: number}}
 * @throws {MHAError} INVALID_ARGUMENT: fewer than 2 checkpoints
 */
export function phaseChange(table) {
  if (!Array.isArray(table) || table.length < 2) throw invalid(`phaseChange: table must hold at least 2 checkpoints, got ${table?.length ?? 0}`);
  const ind = table.map((c) => c.induction);
  const low = Math.min(...ind), high = Math.max(...ind);
  const at = (f) => ind.findIndex((v) => v >= low + f * (high - low));
  const i10 = Math.max(0, at(0.1) - 1), i90 = at(0.9);
  let k = 1;
  for (let i = 1; i < table.length; i++) {
    const rate = (ind[i] - ind[i - 1]) / (table[i].step - table[i - 1].step);
    if (rate > (ind[k] - ind[k - 1]) / (table[k].step - table[k - 1].step)) k = i;
  }
  return { from: table[i10], to: table[i90], steepest: { from: table[k - 1], to: table[k] }, low, high };
}

/** Formats a step count as the lesson writes it ("1,250"). */
export const stepText = (s) => s.toLocaleString('en-US');

/**
 * The lesson's sentence on the phase change, from a checkpoints table (phaseChange): between the
 * two steps, the best induction score and the second copy's bits per character, with the first
 * copy's for comparison. The claims test compares the page's text with this one.
 * @param {object[]} table
 * @returns {{steps: string, induction: string, secondCopy: string, firstCopy: string}}
 */
export function phaseSentence(table) {
  const { from, to } = phaseChange(table);
  const f2 = (v) => v.toFixed(2);
  return {
    steps: `steps ${stepText(from.step)} and ${stepText(to.step)}`,
    induction: `${f2(from.induction)} to ${f2(to.induction)}`,
    secondCopy: `${f2(from.secondCopyBpc)} to ${f2(to.secondCopyBpc)} bits per character`,
    firstCopy: `${f2(from.firstCopyBpc)} to ${f2(to.firstCopyBpc)}`,
  };
}

/**
 * An SVG polyline's points for a series over steps in a box of w × h (y grows downwards):
 * x = step / last step · w, y = h − (v − lo) / (hi − lo) · h.
 * @param {number[]} steps
 * @param {number[]} values
 * @param {number} w
 * @param {number} h
 * @param {number} lo value at the bottom
 * @param {number} hi value at the top
 * @returns {string} "x,y x,y …" (one decimal)
 */
export function chartPoints(steps, values, w, h, lo, hi) {
  const last = steps[steps.length - 1] || 1;
  return steps.map((s, i) => `${(s / last * w).toFixed(1)},${(h - (values[i] - lo) / (hi - lo || 1) * h).toFixed(1)}`).join(' ');
}
