// A character model in this project's file format (mha-wasm.charlm/1) with seeded random weights, of
// any number of layers and heads, with probe texts (so that LanguageModel.heads and copyingScores
// work on it), written with the scripts' safetensors writer: tests/browser/model-view.test.mjs makes a
// GPT-2-small-shaped grid of heads (12 layers × 12 heads) with it, never committed.
import { encodeSafetensors } from './safetensors.mjs';
import { readCharlmConfig, charlmShapes, MODEL_FORMAT } from '../../web/lib/src/formats/charlm.js';
import { mulberry32 } from '../../web/lib/src/engine/weights.js';

/** The vocabulary: lower-case letters, space, a few marks; the last entry is the unknown character. */
export const RANDOM_VOCAB = Object.freeze([...'abcdefghijklmnopqrstuvwxyz .,!?\'', '\u0000']);

/**
 * The bytes of a random character model.
 * @param {{layers: number, heads: number, dModel?: number, context?: number, seed?: number, qkStd?: number}} o
 *   qkStd: the spread of W_Q and W_K (larger: sharper attention); the other matrices 0.08
 * @returns {Uint8Array}
 */
export function randomCharModel({ layers, heads, dModel = 96, context = 128, seed = 11, qkStd = 0.15 }) {
  const config = { vocab_size: RANDOM_VOCAB.length, d_model: dModel, num_heads: heads, num_layers: layers, d_ff: 2 * dModel,
    context, unk: RANDOM_VOCAB.length - 1, norm: 'layernorm', mlp: 'relu', bias: true, positions: 'learned', tied: false };
  const probes = {
    text: ['the cat sat on the mat, and the dog sat on the log.', 'a quick brown fox jumps over the lazy dog!'],
    repeat: ['qzvxkwjmyb qzvxkwjmyb', 'plmoknijbu plmoknijbu'], repeat_span: 11,
  };
  const metadata = { format: MODEL_FORMAT, config: JSON.stringify(config), vocab: JSON.stringify(RANDOM_VOCAB), probes: JSON.stringify(probes) };
  const shapes = charlmShapes(readCharlmConfig(metadata), false);
  const rand = mulberry32(seed);
  const tensors = {};
  for (const [name, shape] of Object.entries(shapes)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (/ln\w*\.weight$/.test(name)) data.fill(1);
    else if (!/bias$/.test(name)) {
      const a = (/(q|k)_proj\.weight$/.test(name) ? qkStd : 0.08) * Math.sqrt(3);
      for (let i = 0; i < n; i++) data[i] = (2 * rand() - 1) * a;
    }
    tensors[name] = { data, shape };
  }
  return encodeSafetensors(metadata, tensors);
}
