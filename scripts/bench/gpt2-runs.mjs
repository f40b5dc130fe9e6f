/**
 * One run of gpt2-peer.mjs, the same code in a Node child and in a Chromium page (no Node imports):
 * ours or onnxruntime-web on GPT-2 small, a 128-token prompt into the KV cache, then greedy steps.
 * The host passes the engine, the model and hooks for what only it can measure (CPU time, memory).
 */

/** Tokens in the prompt. */
export const PROMPT = 128;

/**
 * The prompt: PROMPT ids from a seeded xorshift32 over the vocabulary (the weights are random, so
 * the text does not matter).
 * @param {number} V vocabulary size
 * @returns {number[]}
 */
export function promptIds(V) {
  let s = 0x2545f491;
  const ids = [];
  for (let i = 0; i < PROMPT; i++) { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; ids.push((s >>> 0) % V); }
  return ids;
}

function logSoftmax(x) {
  let m = -Infinity;
  for (const v of x) if (v > m) m = v;
  let s = 0;
  for (const v of x) s += Math.exp(v - m);
  const lse = m + Math.log(s), out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i] - lse;
  return out;
}
const argmax = (x) => { let b = 0; for (let i = 1; i < x.length; i++) if (x[i] > x[b]) b = i; return b; };

/**
 * @typedef {object} Hooks
 * @property {() => number} cpuMs the process's CPU time in ms (NaN where unknown)
 * @property {() => Promise<object>} afterLoad what to record once the model is loaded (e.g. RSS)
 * @property {() => object} afterTiming what to record once the timed work is done (e.g. peak RSS)
 */

/**
 * Times the prompt three times (first, best of the next two) and `tokens` steps after the last one.
 * @param {(ids: number[]) => Promise<number>|number} prompt a fresh prompt; returns the next token
 * @param {(id: number) => Promise<number>|number} step one step; returns the next token
 */
async function timeWork(prompt, step, tokens, hooks) {
  const ids = [], promptMs = [], promptCpu = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now(), c = hooks.cpuMs();
    ids[0] = await prompt();
    promptMs.push(performance.now() - t); promptCpu.push(hooks.cpuMs() - c);
  }
  const t = performance.now(), c = hooks.cpuMs();
  for (let i = 0; i < tokens; i++) ids.push(await step(ids[ids.length - 1]));
  const genMs = performance.now() - t, genCpu = hooks.cpuMs() - c;
  return { gen: ids, promptFirstMs: promptMs[0], promptMs: Math.min(promptMs[1], promptMs[2]), promptCpuMs: Math.min(promptCpu[1], promptCpu[2]),
    tokPerS: tokens / (genMs / 1000), tokPerCpuS: tokens / (genCpu / 1000) };
}

/**
 * Ours: `generator(ids).step()` for the prompt, `step()` after; then, untimed, `run()` of the
 * prompt and of the whole text for the log-probs the check compares.
 * @param {{createMHA: Function, source: string, threads: number, tokens: number, V: number, hooks: Hooks,
 *   weightStorage?: 'float32'|'float16'}} o weightStorage: loadModel's (absent: the file's precision,
 *   float32 for this file)
 */
export async function runOurs({ createMHA, source, threads, tokens, V, hooks, weightStorage }) {
  const t0 = performance.now();
  const mha = await createMHA({ threads });
  const createMs = performance.now() - t0;
  const t1 = performance.now();
  const lm = await mha.loadModel(source, weightStorage ? { weightStorage } : {});
  const loadMs = performance.now() - t1;
  const loaded = await hooks.afterLoad();
  const ids = promptIds(V);
  let g = null;
  const r = await timeWork(() => { if (g) g.dispose(); g = lm.generator(ids, { temperature: 0 }); return g.step().id; }, () => g.step().id, tokens, hooks);
  g.dispose();
  const timed = hooks.afterTiming();
  const heapPeak = mha.memory().heapBytes, tier = mha.info.tier, actualThreads = mha.info.threads;
  const lpPrompt = lm.run(ids).logProbs.data.slice((PROMPT - 1) * V);
  const all = [...ids, ...r.gen.slice(0, tokens)];
  const lpLast = lm.run(all).logProbs.data.slice((all.length - 1) * V);
  lm.dispose();
  mha.dispose();
  return { impl: 'ours', storage: weightStorage || 'float32', threads: actualThreads, tier, createMs, loadMs, ...loaded, ...timed, heapPeak, ...r, lpPrompt: Array.from(lpPrompt), lpLast: Array.from(lpLast) };
}

/**
 * onnxruntime-web with the graph of `style` (onnx-gpt2.mjs): one `session.run` for the prompt (an
 * empty cache), one per step with the previous run's present keys and values as its past.
 * @param {{ort: object, modelBytes: () => Promise<Uint8Array>, style: string, threads: number,
 *          tokens: number, config: object, hooks: Hooks}} o (modelBytes: a function, so that nothing
 *          here keeps the model's bytes once the session holds the weights)
 */
export async function runOrt({ ort, modelBytes, style, threads, tokens, config, hooks }) {
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  const { n_layer: L, n_head: h, n_embd: d, vocab_size: V } = config, dk = d / h;
  const t1 = performance.now();
  const session = await ort.InferenceSession.create(await modelBytes(), {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential', intraOpNumThreads: threads,
  });
  const loadMs = performance.now() - t1;
  const loaded = await hooks.afterLoad();
  const i64 = (a) => BigInt64Array.from(a, (x) => BigInt(x));
  let out = null, past = 0, lpPrompt = null;
  // one forward of `ids` at positions past..past+S−1 over the cache of `out` (null: empty)
  const forward = async (ids) => {
    const S = ids.length, T = past + S;
    const feeds = { input_ids: new ort.Tensor('int64', i64(ids), [1, S]), position_ids: new ort.Tensor('int64', i64(ids.map((_, i) => past + i)), [1, S]) };
    if (style === 'torch') {
      const m = new Float32Array(S * T);
      for (let i = 0; i < S; i++) for (let j = past + i + 1; j < T; j++) m[i * T + j] = -Infinity;
      feeds.mask = new ort.Tensor('float32', m, [1, 1, S, T]);
    }
    for (let l = 0; l < L; l++) {
      if (style === 'attn') feeds[`past_${l}`] = out ? out[`present_${l}`] : new ort.Tensor('float32', new Float32Array(0), [2, 1, h, 0, dk]);
      else for (const s of ['key', 'value']) feeds[`past_${s}_${l}`] = out ? out[`present_${s}_${l}`] : new ort.Tensor('float32', new Float32Array(0), [1, h, 0, dk]);
    }
    out = await session.run(feeds);
    past = T;
    return argmax(out.logits.data);
  };
  const ids = promptIds(V);
  const r = await timeWork(async () => { out = null; past = 0; const id = await forward(ids); lpPrompt = logSoftmax(out.logits.data); return id; },
    (id) => forward([id]), tokens, hooks);
  const lpLast = logSoftmax(out.logits.data);
  const timed = hooks.afterTiming();
  await session.release();
  return { impl: 'ort', style, threads, version: ort.env.versions.web, loadMs, ...loaded, ...timed, ...r, lpPrompt: Array.from(lpPrompt), lpLast: Array.from(lpLast) };
}
