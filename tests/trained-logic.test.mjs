// The pure logic of the trained-model elements (web/lib/components/logic/trained-text.js,
// gqa-twins.js, surprisal.js, trained-heads.js), in Node on the shipped models: a download's
// progress in words, `ablate` lists, a typed text as a model's input, held-out loss against the
// runner's own loss, the grouped-query twins of the manifest, surprisal against −log₂ p recomputed
// from the logits' softmax, and the head explanations of the h = 4 model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createMHA, MHAError } from '../web/lib/src/index.js';
import {
  progressText, parseAblate, formatAblate, showToken, showChar, unitOf, modelInput, heldoutLoss, baseName, aboutModel,
} from '../web/lib/components/logic/trained-text.js';
import { kvName, pickTwins, storedProbes, twinRow } from '../web/lib/components/logic/gqa-twins.js';
import { findRepeat, surprisalBits, parseAblateStrict, measureSurprisal, copyPart } from '../web/lib/components/logic/surprisal.js';
import { probeHeads, explainHeads, fixedCells, solidCells, NARROW_MAP, DEFAULT_MAP } from '../web/lib/components/logic/trained-heads.js';
import { scoreText } from '../web/lib/src/lm/heads.js';

const MODELS = new URL('../web/lib/models/', import.meta.url);
const manifest = JSON.parse(fs.readFileSync(new URL('index.json', MODELS), 'utf8'));
const mha = await createMHA();
const load = (f) => mha.loadModel(new Uint8Array(fs.readFileSync(new URL(f, MODELS))));
const h4 = await load('charlm-h4-s0.safetensors');

test('progressText: both numbers in the unit of the larger, one decimal, the percent rounded down', () => {
  assert.deepEqual(progressText(12_345_678, 250_000_000), { text: '12.3 of 250.0 MB (4 %)', percent: 4 });
  assert.deepEqual(progressText(999_999, 1_000_000), { text: '1.0 of 1.0 MB (99 %)', percent: 99 });
  assert.deepEqual(progressText(1_000_000, 1_000_000), { text: '1.0 of 1.0 MB (100 %)', percent: 100 });
  assert.deepEqual(progressText(52_000, 600_000), { text: '52.0 of 600.0 kB (8 %)', percent: 8 });
  assert.deepEqual(progressText(1_500_000_000, 2_000_000_000), { text: '1.5 of 2.0 GB (75 %)', percent: 75 });
  assert.deepEqual(progressText(3_200_000, null), { text: '3.2 MB', percent: null });
  assert.deepEqual(progressText(0, 0), { text: '0.0 kB', percent: null });
});

test('ablate lists, token display, file names', () => {
  assert.deepEqual(parseAblate('2:1, 2:3 x 0:1 3:0'), [[1, 0], [1, 2]]);
  assert.equal(formatAblate([[1, 0], [1, 2]]), '2:1 2:3');
  assert.equal(showToken(' cat\n\t'), '␣cat↵⇥');
  assert.equal(showToken(''), '∅');
  assert.equal(showChar(' '), '␣');
  assert.equal(baseName('https://x/models/charlm-h4-s0.safetensors?v=1'), 'charlm-h4-s0.safetensors');
  assert.equal(baseName('https://x/hf/gpt2/'), 'gpt2/');
  assert.equal(baseName('https://x/a%20b.bin'), 'a b.bin');
});

test('modelInput: characters cut to the context; token ids for a model without a tokenizer, refused otherwise', () => {
  assert.equal(unitOf(h4.config), 'character');
  assert.equal(modelInput(h4, 'x'.repeat(200)).length, h4.config.context);
  const none = { config: { tokenizer: 'none', vocabSize: 10, context: 3 } };
  assert.equal(unitOf(none.config), 'token');
  assert.deepEqual(Array.from(modelInput(none, '1 2, 3 4')), [1, 2, 3]);
  assert.throws(() => modelInput(none, '1 12'), (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.argument === 'text' && /"12"/.test(e.message));
});

test('heldoutLoss: the runner\'s per-text loss weighted by T − 1, recomputed from its log-probabilities', () => {
  const texts = storedProbes(h4);
  assert.ok(texts.length >= 2);
  const V = h4.config.vocabSize;
  let sum = 0, n = 0;
  for (const t of texts) {
    const r = h4.run(t);
    for (let i = 0; i + 1 < r.ids.length; i++) sum -= r.logProbs.data[i * V + r.ids[i + 1]] / Math.LN2;
    n += r.ids.length - 1;
  }
  assert.ok(Math.abs(heldoutLoss(h4, texts) - sum / n) < 1e-4, `${heldoutLoss(h4, texts)} vs ${sum / n}`);
});

test('the grouped-query twins of the shipped manifest: seeds, names, a row\'s loss and bytes', async () => {
  const p = pickTwins(manifest, 0, false, 'index.json');
  assert.deepEqual(p.seeds, [0, 1]);
  assert.deepEqual(p.mine.map((m) => m.kvHeads).sort(), [1, 2, 8]);
  assert.equal(p.others.length, 0);
  assert.equal(pickTwins(manifest, 0, true, 'index.json').others.length, 3);
  assert.throws(() => pickTwins(manifest, 5, false, 'index.json'), /index.json lists no grouped-query twins with seed 5 \(its "gqa" list has seeds 0, 1\)/);
  assert.deepEqual([kvName(8, 8), kvName(2, 8), kvName(1, 8)], ['multi-head', 'grouped-query', 'multi-query']);
  const entry = p.mine.find((m) => m.kvHeads === 2);
  const lm = await load(entry.file);
  const probes = storedProbes(lm);
  const row = twinRow(entry, lm, probes, { perToken: 1, fullPerToken: 4 });
  assert.equal(row.kvHeads, 2);
  assert.equal(row.numHeads, 8);
  assert.equal(row.file, entry.file);
  assert.equal(row.live, heldoutLoss(lm, probes));
  // the page's passages are a sample of the held-out set: within half a bit of the whole set's figure
  assert.ok(Math.abs(row.live - entry.heldoutBpc) < 0.5, `${row.live} vs ${entry.heldoutBpc}`);
  lm.dispose();
});

test('surprisal: −log₂ p of each next character, p from a softmax of the logits; the repeat found; ablate read strictly', () => {
  const text = 'the cat. the cat.';
  const m = measureSurprisal(h4, text);
  const r = h4.run(text, { logits: true });
  const V = h4.config.vocabSize;
  const bits = surprisalBits(r, V);
  assert.equal(bits[0], null);
  assert.equal(m.bits.length, Array.from(text).length);
  assert.ok(Math.abs(m.mean - bits.slice(1).reduce((a, b) => a + b, 0) / (bits.length - 1)) < 1e-4);
  assert.deepEqual(findRepeat(Array.from('abc abc')), { n: 3, start2: 4 });
  assert.equal(findRepeat(Array.from('abcd')), null);
  assert.deepEqual(parseAblateStrict('2:1 1:2 2:1', h4.config), [[0, 1], [1, 0]]);
  assert.throws(() => parseAblateStrict('3:1', h4.config), (e) => e.argument === 'ablate' && /names layer 3, and this model has layers 1–2/.test(e.message));
});

test('explainHeads on the h = 4 model: one sentence per head, the summary counts the heads that keep their label', () => {
  const ref = probeHeads(h4);
  assert.equal(ref.heads.length, h4.config.numLayers * h4.config.numHeads);
  const text = 'The cat sat on the mat. The cat sat on the mat.';
  const r = h4.run(text);
  const onText = scoreText(r.attention, r.ids);
  const e = explainHeads(ref.heads, onText, ref.copying, []);
  assert.equal(e.lines.length, ref.heads.length);
  assert.match(e.summary, new RegExp(`^On this text, ${e.matches} of the \\d+ labelled heads that it can judge do what their label says`));
  assert.ok(e.labelled >= e.matches);
  // a head switched off is described as such
  const first = ref.heads.find((h) => h.type !== 'broad' && h.type !== 'mixed');
  const off = explainHeads(ref.heads, onText, ref.copying, [[first.layer, first.head]]);
  assert.ok(off.lines.some((l) => l.startsWith(`L${first.layer + 1} · head ${first.head + 1} is switched off`)), off.lines.join('\n'));
});

test('copyPart: a copy\'s first character belongs to it and is counted in neither mean; the counted positions give the per-copy means', () => {
  const m = measureSurprisal(h4, 'purple kites drift north', { repeat: true });
  const { n, start2 } = m.copies;
  const parts = m.bits.map((_, t) => copyPart(m.copies, t));
  assert.deepEqual(parts[0], { copy: 1, counted: false });
  assert.deepEqual(parts[start2], { copy: 2, counted: false });
  assert.deepEqual(parts[n], { copy: 0, counted: false });   // the space between the copies
  const mean = (k) => {
    const xs = m.bits.filter((_, t) => parts[t].copy === k && parts[t].counted);
    assert.equal(xs.length, n - 1);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  assert.ok(Math.abs(mean(1) - m.copies.first) < 1e-9);
  assert.ok(Math.abs(mean(2) - m.copies.second) < 1e-9);
  assert.deepEqual(copyPart(null, 3), { copy: 0, counted: false });
});

test('copiesSentence: the ratio is the quotient of the two numbers it prints', async () => {
  const { copiesSentence } = await import('../web/lib/components/logic/trained-text.js');
  // the case a reader checked: 4.4813 and 0.1548 print as 4.48 and 0.15, so the ratio is 4.48 / 0.15 = 29.9 (not 28.95)
  const s = copiesSentence(4.4813, 0.1548, 'character');
  assert.equal(s, 'First copy: 4.48 bits per character. Second copy: 0.15 bits per character — 4.48 / 0.15 = 29.9 times less surprise the second time.');
  for (const [a, b] of [[3.21, 1.07], [5.5, 0.0123], [2.004, 1.996], [7.2, 0.031]]) {
    const t = copiesSentence(a, b, 'token');
    const m = /(\d+\.\d\d) \/ (\d+\.\d\d) = ([\d,.]+) times/.exec(t);
    assert.ok(m, t);
    const r = Number(m[1]) / Number(m[2]);
    assert.equal(m[3], r >= 100 ? Math.round(r).toLocaleString('en-US') : r.toFixed(1), t);
  }
  assert.match(copiesSentence(2, 2.5, 'character'), /no easier the second time/);
  assert.match(copiesSentence(2, 0.001, 'character'), /Second copy: 0\.00 bits per character — under 0\.005 bits/);
});

test('fixedCells: the largest whole cell from 2 (narrow: 1) to 16 px whose map (T cells and T − 1 gaps of 1 px) fits the side; narrow at most NARROW_MAP', () => {
  const parse = (str) => Object.fromEntries(str.split('; ').map((kv) => kv.split(': ')).map(([k, v]) => [k, Number(v.replace('px', ''))]));
  for (const side of [48, 112, 176, DEFAULT_MAP, 512]) {
    for (let T = 1; T <= 128; T++) {
      const c = parse(fixedCells(side, T));
      for (const [key, s, least] of [['--_cell-wide', side, 2], ['--_cell-narrow', Math.min(side, NARROW_MAP), 1]]) {
        const cell = c[key];
        assert.ok(Number.isInteger(cell) && cell >= least && cell <= 16, `${side}/${T}: ${cell}`);
        const px = (k) => T * k + T - 1;
        // fits, and one more pixel a cell would not (unless a bound holds it: the floor overflows, the 16 px cap)
        if (px(least) > s) assert.equal(cell, least, `${key} ${side}/${T}`);
        else if (cell < 16) assert.ok(px(cell) <= s && px(cell + 1) > s, `${key} ${side}/${T}: ${cell}`);
        else assert.ok(px(16) <= s, `${key} ${side}/${T}`);
      }
      assert.equal(solidCells(side, T), c['--_cell-narrow'] === 1);
    }
  }
  assert.equal(fixedCells(176, 49), '--_cell-wide: 2px; --_cell-narrow: 1px');   // 49 · 2 − 1 = 97 px narrow
  assert.equal(fixedCells(DEFAULT_MAP, 47), '--_cell-wide: 3px; --_cell-narrow: 1px');   // 47 · 4 − 1 = 187 px; 47 · 3 − 1 = 140 px > 100
  assert.equal(fixedCells(DEFAULT_MAP, 20), '--_cell-wide: 9px; --_cell-narrow: 4px');   // 20 · 5 − 1 = 99 px narrow
  assert.equal(fixedCells(DEFAULT_MAP, 5), '--_cell-wide: 16px; --_cell-narrow: 16px');  // a short text: cells capped at 16 px
});

test('aboutModel: the line above the heads, from the grouped-query twin\'s config and training record', async () => {
  const lm = await load('gqa-kv2-s0.safetensors');
  try {
    assert.equal(aboutModel(lm.config, lm.training),
      'This model: 2 layers, h = 8 heads of d_k = 12 sharing 2 K/V heads (grouped-query attention), d_model = 96, rotary positions (RoPE), ' +
      'a context of 96 characters. Trained for 6,000 steps (20 minutes on 1 CPU thread) on Debian package fortunes text; ' +
      `${lm.training.curriculum}. Held-out loss: 2.59 bits per character.`);
    // a folder without a training record: its shape only, in tokens
    assert.equal(aboutModel({ family: 'gpt2', numLayers: 12, numHeads: 12, dK: 64, dModel: 768, context: 1024, vocabSize: 50257, tokenizer: 'bpe' }, null),
      'This model, GPT-2 (Hugging Face folder): 12 layers, h = 12 heads of d_k = 64, d_model = 768, a byte-pair vocabulary of 50,257 tokens, a context of 1024 tokens.');
  } finally { lm.dispose(); }
});
