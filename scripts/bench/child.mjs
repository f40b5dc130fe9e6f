/**
 * One benchmark process (spawned by scripts/bench.mjs): argv[2] is a JSON job.
 *
 *   {mode: 'timing', id, T, d, h, causal, nws: [true, false], budget, minRounds, maxRounds, peers}
 *     ours, onnxruntime-web and tfjs checked and timed in interleaved rounds (scripts/bench/impls.mjs).
 *   {mode: 'rss', impl: 'ours'|'ort', style?, T, d, h, causal, nw}
 *     loads only that implementation, runs one forward, prints process.resourceUsage().maxRSS.
 *   {mode: 'long', ...} (W4) runs ours first (its peak RSS is taken before any peer is loaded),
 *     then tries each peer once and records why it cannot run.
 * job.engine: another tree whose web/lib/src/ and web/lib/wasm/ are benched instead of this one's.
 * Progress goes to stderr; the result is the last line of stdout.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { setEnv, makeData, makeOurs, loadOrt, makeOrtSession, timing, long } from './impls.mjs';
import { libDir } from './tree.mjs';

const require = createRequire(import.meta.url);
const job = JSON.parse(process.argv[2]);
const rssMB = () => process.resourceUsage().maxRSS / 1024;  // KiB -> MiB
setEnv({
  loadOurs: () => import(job.engine ? pathToFileURL(path.join(libDir(job.engine), 'src', 'index.js')).href : '../../web/lib/src/index.js'),
  loadOrt: () => import('onnxruntime-web'),
  async loadTfjs() {
    const wasmFile = require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm');
    return {
      tf: await import('@tensorflow/tfjs-core'),
      wasmBackend: await import('@tensorflow/tfjs-backend-wasm'),
      wasmDir: path.dirname(wasmFile) + path.sep,
    };
  },
  rssMB,
  log: (s) => process.stderr.write(`${s}\n`),
}, job);

async function rssMode(cfg) {
  const data = makeData(cfg);
  const base = rssMB();
  let runner;
  if (cfg.impl === 'ours') {
    runner = (await makeOurs(cfg, data)).prepare(cfg.nw);
  } else {
    const ort = await loadOrt(cfg.threads ?? 1);
    runner = await makeOrtSession(ort, cfg, data, cfg.style, cfg.nw);
  }
  const loaded = rssMB();
  await runner.run();
  return { impl: cfg.impl, nw: cfg.nw, baseMB: base, loadedMB: loaded, maxRSS: rssMB() };
}

const modes = { timing, rss: rssMode, long };
try {
  const result = await modes[job.mode](job);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (e) {
  process.stdout.write(`${JSON.stringify({ id: job.id, fatal: String(e.message || e) })}\n`);
  process.stderr.write(`\n  !!! [${job.id || job.mode}] ${e.stack || e}\n\n`);
  process.exit(1);
}
