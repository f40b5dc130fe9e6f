#!/usr/bin/env node
// Converts Karpathy's stories260K (llama2.c checkpoint + tok512.bin, tests/fixtures/stories260K/)
// once into the model format of docs/trained-models.md: web/lib/models/stories260K.safetensors, float32
// weights named as the format's architecture options say (RMSNorm, SwiGLU, RoPE on interleaved
// pairs, 4 K/V heads for 8 query heads, tied head), the tokenizer's pieces as `vocab` and their merge
// scores as `scores` (tokenizer "llama2c"), and the model's origin and licence in `training`.
//   node scripts/models/stories260k.mjs [--dir tests/fixtures/stories260K] [--out web/lib/models/stories260K.safetensors]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readLlama2cCheckpoint, readLlama2cTokenizer } from '../../web/lib/src/formats/llama2c.js';
import { MODEL_FORMAT } from '../../web/lib/src/lm/model.js';
import { encodeSafetensors } from '../safetensors-write.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const dir = path.resolve(root, arg('--dir', 'tests/fixtures/stories260K'));
const out = path.resolve(root, arg('--out', 'web/lib/models/stories260K.safetensors'));

const { config, tensors } = readLlama2cCheckpoint(fs.readFileSync(path.join(dir, 'stories260K.bin')));
const tok = readLlama2cTokenizer(fs.readFileSync(path.join(dir, 'tok512.bin')), { vocabSize: config.vocab_size });
const utf8 = new TextDecoder('utf-8', { fatal: true });  // every piece of tok512.bin is valid UTF-8: refuse otherwise
const vocab = tok.pieces.map((p) => utf8.decode(p));

const metadata = {
  format: MODEL_FORMAT,
  config: JSON.stringify({ ...config, tokenizer: 'llama2c', unk: 0, bos: 1, eos: 2 }),
  vocab: JSON.stringify(vocab),
  scores: JSON.stringify(Array.from(tok.scores)),
  training: JSON.stringify({
    model: 'stories260K (tinyllamas)',
    author: 'Andrej Karpathy',
    trainedWith: 'llama2.c',
    corpus: 'TinyStories (Eldan & Li, 2023, arXiv:2305.07759)',
    license: 'MIT (llama2.c; see stories260K.LICENSE)',
    source: 'stories260K.bin and tok512.bin, converted by scripts/models/stories260k.mjs',
  }),
};

const bytes = encodeSafetensors(metadata, tensors);
fs.writeFileSync(out, bytes);
fs.copyFileSync(path.join(dir, 'LICENSE'), path.join(path.dirname(out), 'stories260K.LICENSE'));
console.log(`${path.relative(root, out)}: ${bytes.length} bytes, ${Object.keys(tensors).length} tensors`);
