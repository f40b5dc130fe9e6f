/**
 * The benchmark in a browser page: bundled by scripts/bench.mjs --browser (esbuild) into
 * build/bench-page/, served with the repository root, and driven by playwright-core. Exposes
 * window.benchRun(job), which runs one job of scripts/bench/impls.mjs (or {mode: 'peak'}) in this
 * page and resolves to the same JSON result a Node child prints.
 * Ours is imported at run time from the served web/lib/src/index.js (not bundled), so that it loads its
 * .wasm files from web/lib/wasm/ exactly as a user's page does; the peers load theirs from their
 * packages' dist/ folders under /node_modules/.
 */
import * as ort from 'onnxruntime-web';
import * as tf from '@tensorflow/tfjs-core';
import * as wasmBackend from '@tensorflow/tfjs-backend-wasm';
import { setEnv, timing, long } from './impls.mjs';
import { measurePeak } from './peak.mjs';

const OURS = '/web/lib/src/index.js';

window.benchRun = async (job) => {
  if (job.mode === 'peak') return measurePeak({ seconds: job.seconds ?? 3 });
  setEnv({
    loadOurs: () => import(/* @vite-ignore */ OURS),
    async loadOrt() {
      ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
      return ort;
    },
    loadTfjs: async () => ({ tf, wasmBackend, wasmDir: '/node_modules/@tensorflow/tfjs-backend-wasm/dist/' }),
    rssMB: () => null,
    log: (s) => console.log(s),
  }, job);
  return job.mode === 'long' ? long(job) : timing(job);
};
window.benchReady = true;
