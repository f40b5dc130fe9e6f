/**
 * The engine's dedicated module worker: the script `createWorkerMHA()` (worker.js) starts with
 * `new Worker(new URL('./engine-worker.js', import.meta.url), { type: 'module' })`. It holds the
 * one engine of the page (createMHA), every model loaded through it and their generators, and
 * answers worker.js's messages one at a time; a computation's buffers go back transferred (no copy).
 *
 * Messages in: `{id, op, ...}`, op one of init, load, call, memory, dispose; out: `{id, progress}`
 * while a load reads its files, then `{id, ok: true, value}` or `{id, ok: false, error}` (the
 * error's name, code, message, argument, bytes and index, rebuilt as an MHAError by worker.js).
 * @module engine-worker
 */
import { createMHA, scoreText, copyingScores, eigenPositivity, ovLogits } from './index.js';

let engine = null;            // Promise of the engine (init)
const models = new Map();     // model id → LanguageModel
const generators = new Map(); // generator id → {model id, TokenGenerator}
let nextId = 1;

/** What a main thread needs of an error to rebuild it. */
function errorFields(e) {
  const o = { name: e?.name ?? 'Error', message: e?.message ?? String(e) };
  for (const k of ['code', 'argument', 'bytes', 'index']) if (e?.[k] !== undefined) o[k] = e[k];
  return o;
}

/** The distinct ArrayBuffers under a value (typed arrays in objects and arrays), to transfer. */
function buffers(v, out = new Set(), depth = 0) {
  if (!v || typeof v !== 'object' || depth > 6) return out;
  if (ArrayBuffer.isView(v)) {
    if (v.buffer instanceof ArrayBuffer) out.add(v.buffer);
    return out;
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) buffers(x, out, depth + 1);
  return out;
}

/** Posts a value, its buffers transferred; a buffer that cannot be transferred is copied instead. */
function reply(id, value) {
  try {
    self.postMessage({ id, ok: true, value }, [...buffers(value)]);
  } catch {
    self.postMessage({ id, ok: true, value });
  }
}

/** The model's prompt from the element's text: token models encode and keep at most `most` ids. */
function input(lm, text, most) {
  const c = lm.config;
  if (typeof text !== 'string') return Int32Array.from(text).slice(0, most);
  if (!c.tokenizer || c.tokenizer === 'characters' || c.tokenizer === 'none') return Array.from(text).slice(0, most).join('');
  return lm.encode(text).slice(0, most);
}

/** One step of a generator as plain data (attention rows as Float32Arrays). */
function stepData(g, s) {
  return { token: s.token, id: s.id, p: s.p, cacheLength: s.cacheLength, char: s.char,
    attention: s.attention.map((t) => ({ data: t.data, shape: t.shape })), text: g.text };
}

const METHODS = {
  /** run(input, {ablate, most, scores, logProbs, layers}) → run's result (+ textScores, decoded text, the input ids). */
  run(lm, [text, o = {}]) {
    const x = o.most ? input(lm, text, o.most) : text;
    const r = lm.run(x, { ablate: o.ablate });
    const keep = (l) => !o.layers || o.layers.includes(l);
    const out = { ...r, attention: r.attention.map((t, l) => (keep(l) ? { data: t.data, shape: t.shape } : null)),
      logProbs: o.logProbs === false ? null : { data: r.logProbs.data, shape: r.logProbs.shape },
      input: typeof x === 'string' ? x : Int32Array.from(x), text: typeof x === 'string' ? x : lm.decode(x) };
    if (o.scores) out.textScores = scoreText(r.attention, r.ids);
    return out;
  },
  encode: (lm, [text]) => lm.encode(text),
  decode: (lm, [ids]) => lm.decode(ids),
  generate: (lm, [prompt, n, o]) => lm.generate(prompt, n, o),
  /** ovCircuit() → every head's copying score and eigenvalue positivity (copyingScores, eigenPositivity). */
  ovCircuit: (lm) => ({ copying: copyingScores(lm), positivity: eigenPositivity(lm) }),
  /** ovLogits(layer) → ovLogits(lm, layer): per head a [V, V] Float64Array (transferred). */
  ovLogits: (lm, [layer]) => ovLogits(lm, layer),
  generator(lm, [prompt, o], mid) {
    const g = lm.generator(prompt, o);
    const gid = nextId++;
    generators.set(gid, { mid, g });
    return { generator: gid, text: g.text, ids: Int32Array.from(g._ids), cacheLength: g.cacheLength };
  },
};

const GEN = {
  /** step(n): n steps, each with its newest attention rows; the text and ids after the last. */
  step(g, [n = 1]) {
    const steps = [];
    for (let i = 0; i < n; i++) steps.push(stepData(g, g.step()));
    return { steps, text: g.text, ids: Int32Array.from(g._ids), cacheLength: g.cacheLength };
  },
  reset(g) { g.reset(); return { text: g.text, ids: Int32Array.from(g._ids), cacheLength: g.cacheLength }; },
};

/** What a main thread keeps of a loaded model: its fields and its heads (or why it has none). */
function modelFields(lm, mid) {
  let heads = null, headsError = null, copying = null;
  const headsProbes = lm.headsProbes;
  // a file's probes are measured at load; a folder's random-token probes (a whole model's run per
  // probe) are not measured here, and its copying score would span the whole vocabulary
  if (headsProbes === 'file') {
    try { heads = lm.heads; } catch (e) { headsError = errorFields(e); }
    if (heads) try { copying = copyingScores(lm); } catch { copying = null; }
  } else {
    headsError = { name: 'MHAError', code: 'INVALID_ARGUMENT', message: 'heads: the model carries no probe texts, and the engine worker does not measure a model\'s heads on random tokens (LanguageModel.heads on the main thread does)' };
  }
  return { model: mid, config: lm.config, vocab: lm.vocab, metadata: lm.metadata, training: lm.training, headsProbes, heads, headsError, copying };
}

async function handle(m) {
  switch (m.op) {
    case 'init': {
      engine ??= createMHA(m.options ?? {});
      const mha = await engine;
      return { ...mha.info };
    }
    case 'load': {
      const mha = await engine;
      const opts = { progress: (p) => self.postMessage({ id: m.id, progress: p }) };
      if (m.tokenizer !== undefined) opts.tokenizer = m.tokenizer;
      if (m.weightStorage !== undefined) opts.weightStorage = m.weightStorage;
      const lm = await mha.loadModel(m.source, opts);
      const mid = nextId++;
      models.set(mid, lm);
      return modelFields(lm, mid);
    }
    case 'call': {
      if (m.generator !== undefined) {
        const rec = generators.get(m.generator);
        if (m.method === 'dispose') { rec?.g.dispose(); generators.delete(m.generator); return null; }
        if (!rec) throw Object.assign(new Error(`${m.method}: this generator was disposed`), { name: 'MHAError', code: 'DISPOSED' });
        return GEN[m.method](rec.g, m.args ?? []);
      }
      const lm = models.get(m.model);
      if (m.method === 'dispose') {
        for (const [gid, rec] of generators) if (rec.mid === m.model) generators.delete(gid);
        lm?.dispose();
        models.delete(m.model);
        return null;
      }
      if (!lm) throw Object.assign(new Error(`${m.method}: this model was disposed`), { name: 'MHAError', code: 'DISPOSED' });
      return METHODS[m.method](lm, m.args ?? [], m.model);
    }
    case 'memory': return (await engine).memory();
    case 'dispose': {
      for (const lm of models.values()) lm.dispose();
      models.clear();
      generators.clear();
      (await engine)?.dispose();
      return null;
    }
    default: throw new Error(`unknown op ${m.op}`);
  }
}

self.onmessage = async ({ data: m }) => {
  try {
    reply(m.id, await handle(m));
  } catch (e) {
    self.postMessage({ id: m.id, ok: false, error: errorFields(e) });
  }
};
