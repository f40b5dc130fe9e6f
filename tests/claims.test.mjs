// No claim without its number: every number in the lesson's own prose (web/site/index.html, <main>)
// is either a claim, marked <span data-claim="id">, whose text this test recomputes from the engine
// (the JS API, the shipped models' manifest, the restaurant data) and compares character for
// character; or it is a definition in the mathematics (t + 1, exp(−∞) = 0), listed in DEFINITIONS
// with its reason. A new number in the prose that is neither fails the test, and so does a claim
// whose number no longer matches what the engine computes. The self-check's answers are recomputed
// the same way. Numbers inside the elements are computed by the elements at render time (their own
// tests compare them with the JS API).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createMHA } from '../web/lib/src/index.js';
import { X0, HEADS, restaurantLayerOptions } from '../web/lib/components/logic/restaurant.js';
import { MODELS } from '../web/lib/components/logic/models-data.js';
import { copyingScores, inductionVerdict } from '../web/lib/src/lm/copying.js';
import { HEAD_TYPES } from '../web/lib/src/lm/heads.js';
import { compositionExperiment } from '../web/lib/components/logic/composition.js';
import { eigenPositivity } from '../web/lib/src/lm/ov-eigen.js';
import { readCheckpoints, phaseChange, phaseSentence } from '../web/lib/components/logic/phase-change.js';

const PAGE = readFileSync(new URL('../web/site/index.html', import.meta.url), 'utf8');
const TRAINED_JS = readFileSync(new URL('../web/site/lesson/trained.js', import.meta.url), 'utf8');
const MANIFEST = JSON.parse(readFileSync(new URL('../web/lib/models/index.json', import.meta.url), 'utf8'));
const mha = await createMHA();
// the explorer's default model (web/lib/components/models.js: DEFAULT_MODEL_URL)
const charlm = await mha.loadModel(new URL('../web/lib/models/charlm-h4-s0.safetensors', import.meta.url));

/** Numbers that define rather than claim: each regex is removed from the prose before the digit scan. */
const DEFINITIONS = [
  [/\bsections? \d+(?: (?:to|and) \d+)?/g, 'a reference to a section (checked against the section numbers below)'],
  [/\bhead [12]\b/g, 'the names of the restaurant example\'s two heads and of "head 1, head 2" in the W_O sum'],
  [/\bposition 1 predicts token 2, position 2 predicts token 3/g, 'what next-token prediction means'],
  [/\bt \+ 1\b/g, 'the next position'],
  [/\bexp\(−∞\) = 0/g, 'the exponential of minus infinity'],
  [/\bsums? to 1\b/g, 'a probability distribution'],
  [/\b0 bits for a certain guess, 1 bit for a coin flip/g, 'the definition of a bit'],
  [/\bd<sub>k<\/sub> = 1\b|\bd_k = 1\b/g, 'the extreme of one dimension per head'],
  [/\bg = 1\b/g, 'multi-query attention is defined as one K/V head'],
  [/\(i\+1\)·d<sub>k<\/sub> − 1/g, 'the column range of head i'],
  [/<sup>2<\/sup>/g, 'a square (T², d_model²)'],
  [/log<sub>2<\/sub>/g, 'the base-2 logarithm'],
  [/\bfrom 0 to 1\b/g, 'the range of an attention weight'],
  [/\bWrite 1 token\b/g, 'the name of a button of <mha-gqa-story>'],
  [/\bDao et al\., 2022|Olsson et al\., 2022|Elhage et al\. \(2021\)|Wang et al\. \(2022\)/g, 'citations'],
  [/\blayer [12]\b/g, 'the names of the trained models\' two layers'],
  [/−1 to 1\b/g, 'the range of Σλ / Σ|λ|'],
  [/\bGPT-3\.5 and GPT-4\b|\bstories260K\b|\bT5\b|\bllama2\.c\b|\bGPT-2 small\b/g, 'names'],
];

/** The <main> of a page, without comments and the self-check form (its answers are checked separately). */
function mainOf(html) {
  const m = html.match(/<main[\s\S]*?<\/main>/);
  assert.ok(m, 'the page has a <main>');
  return m[0].replace(/<!--[\s\S]*?-->/g, '').replace(/<form id="quiz">[\s\S]*?<\/form>/, '')
    .replace(/<p class="score"[\s\S]*?<\/p>/, '');   // the quiz score, "0 / n": checked with the quiz
}

/** {claims: Map id -> text, prose: text without claims, tags and definitions, sections: number[]} */
export function readPage(html) {
  const main = mainOf(html);
  const claims = new Map();
  const dup = [];
  let prose = main.replace(/<span data-claim="([^"]+)">([\s\S]*?)<\/span>/g, (_, id, text) => {
    if (claims.has(id)) dup.push(id);
    claims.set(id, text.replace(/\s+/g, ' ').trim());
    return ' ';
  });
  assert.deepEqual(dup, [], 'each claim id is used once');
  const sections = [...prose.matchAll(/<span class="num">(\d+)<\/span>/g)].map((m) => Number(m[1]));
  prose = prose.replace(/<span class="num">\d+<\/span>/g, ' ')
    .replace(/<[^>]*>/g, (tag) => (/^<\/?(sub|sup)\b/.test(tag) ? tag : ' '))   // attributes (data-tex, seq-len) are not prose
    .replace(/\s+/g, ' ');
  const refs = [...prose.matchAll(/\bsections? (\d+)(?: (?:to|and) (\d+))?/g)].flatMap((m) => [m[1], m[2]].filter(Boolean).map(Number));
  for (const [re] of DEFINITIONS) prose = prose.replace(re, ' ');
  prose = prose.replace(/<\/?(sub|sup)>/g, '');
  const stray = [...prose.matchAll(/[^\s]{0,30}\d[^\s]*(?:\s[^\s]+){0,3}/g)].map((m) => m[0]);
  return { claims, stray, sections, refs };
}

/** The attributes of the first element with this id, as an object. */
function attrs(html, id) {
  const m = html.match(new RegExp(`<[a-z-]+ id="${id}"([^>]*)>`));
  assert.ok(m, `element #${id} is on the page`);
  return Object.fromEntries([...m[1].matchAll(/([a-z-]+)(?:="([^"]*)")?/g)].map((a) => [a[1], a[2] ?? '']));
}

const f3 = (v) => v.toFixed(3);
const list = (xs) => (xs.length === 1 ? `${xs[0]}` : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`);

/** The function that backs each claim: returns the text the page must show, from the engine. */
export function backers(html) {
  const widget = attrs(html, 'widget');
  const T = Number(widget['seq-len']), d = Number(widget['d-model']);
  const options = widget['head-options'].split(/\s+/).map(Number);
  const scale = attrs(html, 'scale-passport');
  const restaurant = () => {
    const layer = mha.createLayer(restaurantLayerOptions());
    try {
      const tr = layer.trace(X0);
      const w = layer.forward(X0, { needWeights: true }).weights.toArray();
      return { tr, w, out: layer.forward(X0).output.toArray() };
    } finally { layer.dispose(); }
  };
  const gqa = MANIFEST.gqa;
  const surprisal = attrs(html, 'surprisal');
  return {
    'map.batch': () => {
      // the layer map has no batch attribute: its shapes and PyTorch lines are those of one sequence
      const map = attrs(html, 'layer-map');
      assert.equal(map.batch, undefined, 'the sentence says the figure is unbatched');
      return 'one sequence, so its PyTorch lines have no batch axis';
    },
    'explorer.drives': () => {
      // the elements whose ablate the page's script sets from the explorer's switches (lesson/trained.js)
      const vars = Object.fromEntries([...TRAINED_JS.matchAll(/const (\w+) = document\.querySelector\('#([\w-]+)'\)/g)].map((m) => [m[1], m[2]]));
      const driven = [...TRAINED_JS.matchAll(/(\w+)\.ablate = explorer\.ablate/g)].map((m) => vars[m[1]]);
      const names = { generate: 'the generator below', surprisal: 'the surprise strips below', induction: 'the induction map below' };
      assert.ok(driven.length > 0 && driven.every((id) => names[id]), `driven: ${driven}`);
      // the strips' own choice stays the fixed one the sentence describes
      assert.ok(!driven.includes('surprisal'), 'the page says the surprise strips keep their own heads');
      return list(driven.map((id) => names[id]));
    },
    'surprisal.ablated': () => {
      // the heads <mha-surprisal> switches off are exactly those that pass both induction tests
      const copying = copyingScores(charlm);
      const both = charlm.heads.filter((h, i) => inductionVerdict(h, copying[i]) === 'induction');
      assert.ok(both.length > 0, 'the model has heads that pass both tests');
      assert.deepEqual(surprisal.ablate.split(/\s+/), both.map((h) => `${h.layer + 1}:${h.head + 1}`));
      const layers = [...new Set(both.map((h) => h.layer + 1))];
      assert.equal(layers.length, 1, 'one layer, as the sentence says');
      return `${list(both.map((h) => h.head + 1))} of layer ${layers[0]}`;
    },
    ...compositionBackers(html),
    ...ovBackers(html),
    ...phaseBackers(html),
    'widget.seqLen': () => String(T),
    'widget.dModel': () => String(d),
    'widget.wQ': () => {
      // W_Q over all heads is the same for every h offered, and equal to one head as wide as d_model
      const counts = options.map((h) => mha.passport({ seqLen: T, dModel: d, numHeads: h, bias: false }).params);
      for (const p of counts) assert.equal(p.wQ, counts[0].wQ);
      assert.equal(counts[0].wQ, counts[0].singleHeadWQ);
      return `${d} × ${d} = ${counts[0].wQ}`;
    },
    'widget.extraH': () => {
      // the divisors of d_model up to the largest h offered (the engine refuses the others) beyond 1, 2, 4, 8
      const max = Math.max(...options);
      const ok = [];
      for (let h = 1; h <= max; h++) {
        try { mha.passport({ seqLen: T, dModel: d, numHeads: h }); ok.push(h); } catch { /* h does not divide d_model */ }
      }
      assert.deepEqual(options, ok, 'the widget offers every divisor up to its largest h');
      return list(ok.filter((h) => ![1, 2, 4, 8].includes(h)));
    },
    'widget.maxH': () => String(Math.max(...options)),
    'models.dkBand': () => {
      const dks = [...new Set(MODELS.map((m) => mha.passport({ seqLen: 1, dModel: m.dModel, numHeads: m.heads }).dK))].sort((a, b) => a - b);
      return dks.join(' or ');
    },
    'restaurant.dModel': () => String(X0[0].length),
    'restaurant.h': () => String(HEADS.length),
    'restaurant.dK': () => {
      const widths = restaurant().tr.heads.map((hd) => hd.q.shape.at(-1));
      assert.ok(widths.every((w) => w === widths[0]), 'both heads compare in the same width');
      return String(widths[0]);
    },
    'restaurant.dV1': () => String(restaurant().tr.heads[0].v.shape.at(-1)),
    'restaurant.dV2': () => String(restaurant().tr.heads[1].v.shape.at(-1)),
    'restaurant.concat': () => String(restaurant().tr.concat.shape.at(-1)),
    'restaurant.wO': () => `${restaurant().tr.concat.shape.at(-1)} × ${restaurant().out[0].length}`,
    'restaurant.daniel': () => {
      const { w } = restaurant();
      assert.ok(w[1][2][2] > w[0][2][2], 'budget puts more weight than taste on Daniel\'s own row');
      return `${f3(w[1][2][2])} against ${f3(w[0][2][2])}`;
    },
    'restaurant.alex': () => {
      const { w } = restaurant();
      assert.ok(w[1][0][0] < w[0][0][0], 'budget puts a little less weight than taste on Alex\'s own row');
      return `${f3(w[1][0][0])} against ${f3(w[0][0][0])}`;
    },
    'restaurant.rounded': () => {
      // the hand-rounded value the source circulates; the engine's exact value differs from it
      const cheap = restaurant().out[0][1];
      assert.notEqual(f3(cheap), '4.001');
      assert.ok(Math.abs(cheap - 4.001) / cheap < 0.02, `the rounded value is within 2 % of the exact ${cheap}`);
      return '4.001';
    },
    'scale.dModel': () => scale['d-model'],
    'scale.h': () => scale.heads,
    'scale.batch': () => scale.batch,
    'scale.seqLen': () => scale['seq-len'],
    'gqa.h': () => String(new Set(gqa.map((m) => m.numHeads)).size === 1 && gqa[0].numHeads),
    'gqa.layers': () => String(new Set(gqa.map((m) => m.numLayers)).size === 1 && gqa[0].numLayers),
    'gqa.g8': () => String(Math.max(...gqa.map((m) => m.kvHeads))),
    'gqa.g2': () => String([...new Set(gqa.map((m) => m.kvHeads))].sort((a, b) => a - b)[1]),
    'gqa.g1': () => String(Math.min(...gqa.map((m) => m.kvHeads))),
    'gqa.group': () => {
      const g = [...new Set(gqa.map((m) => m.kvHeads))].sort((a, b) => a - b)[1];
      return String(gqa[0].numHeads / g);
    },
  };
}

/** The claims of section 9's composition experiment, measured on <mha-composition>'s phrase (its default when unset). */
function compositionBackers(html) {
  const el = attrs(html, 'composition');
  assert.equal(el.model, undefined, 'the experiment runs the explorer\'s default model, the one loaded here');
  const m = compositionExperiment(charlm, el.phrase ?? 'purple kites drift north');
  const f2 = (v) => v.toFixed(2);
  return {
    'composition.attention': () => {
      assert.ok(m.heads.labelled && m.heads.writers.every(([l]) => l === 0) && m.heads.readers.every(([l]) => l === 1), 'layer 1 writes, layer 2 reads');
      return `${f2(m.whole.induction)} to ${f2(m.writersOff.induction)}`;
    },
    'composition.bits': () => {
      // "about what the first copy costs": within a bit of it
      const r = charlm.run(`${m.phrase} ${m.phrase}`, { ablate: m.heads.writers });
      const n = m.phrase.length, V = charlm.config.vocabSize;
      let s = 0;
      for (let t = 0; t < n - 1; t++) s -= r.logProbs.data[t * V + r.ids[t + 1]];
      assert.ok(Math.abs(s / (n - 1) / Math.LN2 - m.writersOff.bits) < 1, 'the second copy costs about what the first does');
      return `${f2(m.whole.bits)} to ${f2(m.writersOff.bits)}`;
    },
    'composition.control': () => {
      assert.ok(m.controlOff.induction > m.writersOff.induction && m.controlOff.bits < m.writersOff.bits, 'the control hurts less');
      assert.ok(m.controlOff.induction < m.whole.induction, 'but it hurts');
      return `${f2(m.controlOff.induction)} and ${f2(m.controlOff.bits)}`;
    },
  };
}

/**
 * The claims of section 10's phase-change sentence, from the training checkpoints <mha-phase-change>
 * shows (the default file): the model's size, how many checkpoints, and where the best induction
 * score rose (logic/phase-change.js phaseChange: from the last checkpoint below 10 % of its rise to
 * the first at 90 %) with both copies' bits per character there.
 */
function phaseBackers(html) {
  assert.equal(attrs(html, 'phase-change').model, undefined, 'the element shows the default checkpoints, the ones read here');
  const ck = readCheckpoints(readFileSync(new URL('../web/lib/models/phase-change.safetensors', import.meta.url)));
  const cfg = JSON.parse(ck.metadata.config);
  const s = phaseSentence(ck.table);
  const { from, to } = phaseChange(ck.table);
  return {
    'phase.model': () => `d<sub>model</sub> = ${cfg.d_model} and ${cfg.num_heads} heads per layer`,
    'phase.count': () => `${ck.steps.length} checkpoints`,
    'phase.steps': () => s.steps,
    'phase.induction': () => {
      assert.ok(to.induction - from.induction > 0.3, 'the score jumps');
      return s.induction;
    },
    'phase.secondCopy': () => {
      assert.ok(from.secondCopyBpc - to.secondCopyBpc > 1, 'the second copy\'s loss falls');
      return s.secondCopy;
    },
    'phase.firstCopy': () => s.firstCopy,
  };
}

/** The claims of section 9's OV-circuit paragraphs, from the model <mha-ov-circuit> shows (the default one). */
function ovBackers(html) {
  assert.equal(attrs(html, 'ov-circuit').model, undefined, 'the element shows the default model, the one loaded here');
  const copying = copyingScores(charlm), pos = eigenPositivity(charlm), heads = charlm.heads;
  const f2 = (v) => v.toFixed(2).replace('-', '−');
  const pick = (keep) => heads.map((h, i) => ({ h, c: copying[i], p: pos[i] })).filter(keep);
  return {
    'ov.vocab': () => String(charlm.config.vocabSize),
    'ov.probes': () => {
      const p = JSON.parse(charlm.metadata.probes);
      assert.ok(p.repeat.every((r) => r.length === 2 * p.repeat_span && r.slice(0, p.repeat_span) === r.slice(p.repeat_span)), 'each probe is a span written twice');
      assert.ok(p.repeat.every((r) => /^[A-Za-z ]+$/.test(r)), 'letters');
      return `${p.repeat.length} strings of ${p.repeat_span} random letters`;
    },
    'ov.induction': () => {
      const both = pick(({ h, c }) => inductionVerdict(h, c) === 'induction');
      assert.equal(both.length, 2, 'the two induction heads');
      return `copying scores ${both.map((x) => f2(x.c.score)).join(' and ')}, positivity ${both.map((x) => f2(x.p.positivity)).join(' and ')}`;
    },
    'ov.previous': () => {
      const prev = pick(({ h }) => h.layer === 0 && h.type === 'previous-token');
      assert.ok(prev.length === 2 && prev.every((x) => x.p.positivity < 0 && !x.c.copies));
      return `positivity ${prev.map((x) => f2(x.p.positivity)).join(' and ')}`;
    },
    'ov.current': () => {
      const cur = pick(({ h }) => h.layer === 1 && h.type === 'current-token');
      assert.equal(cur.length, 1);
      const [{ h, c, p }] = cur;
      assert.ok(!c.copies && p.positivity > 0.5, 'the two measures disagree');
      return `head ${h.head + 1}, a current-token head, with a copying score of ${f2(c.score)} but a positivity of ${f2(p.positivity)}`;
    },
    'ov.curriculum': () => {
      // the training record stored in the file (scripts/train/train.py's curriculum)
      const t = charlm.training;
      const m = t.curriculum.match(/(\d+) % of training windows are one span of 8-32 characters repeated.*from step (\d+) on: (\d+) % repeats/);
      assert.ok(m, t.curriculum);
      assert.equal(m[1], '50', 'half');
      assert.ok(Number(m[3]) < 50, 'fewer later');
      return `first ${Number(m[2]).toLocaleString('en-US')} of its ${t.steps.toLocaleString('en-US')} training steps, half`;
    },
  };
}

/** Every problem of a page: stray numbers, claims without a backer, claims whose text differs. */
export function problems(html) {
  const out = [];
  const { claims, stray, sections, refs } = readPage(html);
  for (const s of stray) out.push(`a number with no claim or definition: "${s}"`);
  for (const r of refs) if (!sections.includes(r)) out.push(`a reference to section ${r}, which does not exist`);
  const b = backers(html);
  for (const [id, text] of claims) {
    if (!b[id]) { out.push(`claim ${id} has no backing function`); continue; }
    let want;
    try { want = b[id](); } catch (e) { out.push(`claim ${id}: ${e.message}`); continue; }
    if (want !== text) out.push(`claim ${id}: the page says "${text}", the engine gives "${want}"`);
  }
  for (const id of Object.keys(b)) if (!claims.has(id)) out.push(`backer ${id} has no claim on the page`);
  return out;
}

test('every number in the lesson prose is a claim the engine backs, or a definition', () => {
  assert.deepEqual(problems(PAGE), []);
  const { claims } = readPage(PAGE);
  assert.ok(claims.size >= 25, `the page marks its claims (${claims.size})`);
});

test('the claims check fails when a number changes or an unmarked number appears (canary)', () => {
  // a claim whose number changes
  const changed = PAGE.replace('<span data-claim="restaurant.daniel">0.897', '<span data-claim="restaurant.daniel">0.898');
  assert.notEqual(changed, PAGE);
  assert.match(problems(changed).join('\n'), /restaurant\.daniel/);
  // a new number in the prose, outside any claim
  const stray = PAGE.replace('<h2 id="why-h">', '<p>Heads cost 12 % more.</p><h2 id="why-h">');
  assert.match(problems(stray).join('\n'), /no claim or definition: "12/);
  // a claim with no backer, and a reference to a missing section
  const unbacked = PAGE.replace('<h2 id="why-h">', '<p><span data-claim="made.up">3</span> heads, see section 42.</p><h2 id="why-h">');
  const p = problems(unbacked).join('\n');
  assert.match(p, /made\.up has no backing function/);
  assert.match(p, /section 42/);
});

// ---------------------------------------------------------------------------------- self-check
/** {q: {answer, options: {value: label}}} of the quiz. */
function quiz(html) {
  const out = {};
  for (const m of html.matchAll(/<fieldset class="q" data-q="([^"]+)" data-answer="([^"]+)">([\s\S]*?)<\/fieldset>/g)) {
    const options = Object.fromEntries([...m[3].matchAll(/value="([^"]+)">\s*([^<]*)/g)].map((o) => [o[1], o[2].trim()]));
    out[m[1]] = { answer: m[2], options };
  }
  return out;
}

test('the self-check answers are the engine\'s', () => {
  const q = quiz(PAGE);
  assert.equal(PAGE.match(/id="quiz-score">0 \/ (\d+)</)?.[1], String(Object.keys(q).length), 'the score counts every question');
  assert.deepEqual(Object.keys(q).sort(), ['causal', 'cost', 'cross', 'dk', 'gqa', 'induction', 'one', 'ratio', 'shape', 'wo']);
  assert.equal(q.dk.answer, String(mha.passport({ seqLen: 1, dModel: 512, numHeads: 8 }).dK));
  const p8 = mha.passport({ seqLen: 10, dModel: 512, numHeads: 8, batch: 2 });
  assert.equal(q.ratio.answer, p8.params.wQ / p8.params.singleHeadWQ === 1 ? '1' : 'other');
  const weightsShape = p8.steps.find((s) => /attention weights/.test(s.name)).shape;
  assert.equal(q.shape.options[q.shape.answer], `[${weightsShape.join(', ')}]`);
  // 64 query heads, 8 K/V heads: W_K (and the cache) is 8 times smaller
  const full = mha.passport({ seqLen: 1, dModel: 8192, numHeads: 64 });
  const grouped = mha.passport({ seqLen: 1, dModel: 8192, numHeads: 64, kvHeads: 8 });
  assert.equal(q.gqa.answer, String(full.params.wK / grouped.params.wK));
  // causal mask, 4 tokens, one head: the non-zero weights of a forward
  const layer = mha.createLayer({ dModel: 8, numHeads: 1, seed: 3 });
  const cross = mha.createLayer({ dModel: 16, numHeads: 8, seed: 5 });
  try {
    const w = layer.forward(Array.from({ length: 4 }, (_, t) => Array.from({ length: 8 }, (_, e) => Math.sin(t + 0.3 * e))),
      { causal: true, needWeights: true }).weights;
    assert.equal(q.causal.answer, String(w.data.filter((v) => v !== 0).length));
    const tgt = Array.from({ length: 7 }, (_, t) => Array.from({ length: 16 }, (_, e) => Math.cos(t * e)));
    const src = Array.from({ length: 6 }, (_, t) => Array.from({ length: 16 }, (_, e) => Math.sin(t + e)));
    const r = cross.forward(tgt, { key: src, value: src, needWeights: true });
    assert.equal(q.cross.options[q.cross.answer], `[${r.weights.shape.join(', ')}]`);
  } finally { layer.dispose(); cross.dispose(); }
  // h 8 -> 16 at fixed d_model and T: W_Q and the Q·Kᵀ FLOPs stay, the attention weights double
  const a = mha.passport({ seqLen: 10, dModel: 512, numHeads: 8 }), b = mha.passport({ seqLen: 10, dModel: 512, numHeads: 16 });
  const n = (p) => p.steps.find((s) => /attention weights/.test(s.name)).shape.reduce((x, y) => x * y, 1);
  assert.equal(a.params.wQ, b.params.wQ);
  assert.equal(a.flops.scores, b.flops.scores);
  assert.equal(n(b), 2 * n(a));
  assert.equal(q.cost.answer, 'weights');
  assert.match(q.cost.options.weights, /attention weights/);
});

test('every head type the trained elements name is defined in the prose before the first of them (section 9)', () => {
  const main = mainOf(PAGE);
  const first = main.indexOf('<mha-trained-heads');
  assert.ok(first > 0);
  for (const name of [...HEAD_TYPES.map((t) => t[1]), 'broad', 'mixed']) {
    const re = new RegExp(`<strong>${name}(?:\\s+head)?</strong>`);
    const at = main.search(re);
    assert.ok(at >= 0 && at < first, `"${name}" is defined (in bold) before <mha-trained-heads>`);
  }
});

test('the header\'s reading time follows from the page: its words at 200 a minute, and 3 minutes per interactive figure', () => {
  const main = mainOf(PAGE);
  const words = main.replace(/<[^>]*>/g, ' ').split(/\s+/).filter((w) => /\w/.test(w)).length;
  const figures = [...main.matchAll(/<(mha-[a-z-]+)[\s>]/g)].filter((m) => m[1] !== 'mha-engine-info').length;
  const reading = Math.round(words / 200 / 5) * 5;
  const total = Math.round((words / 200 + 3 * figures) / 5) * 5;
  const kicker = PAGE.match(/<p class="kicker">([^<]*)<\/p>/)?.[1];
  assert.ok(kicker, 'the header has its kicker line');
  assert.match(kicker, new RegExp(`^Attention · about ${reading} minutes of reading, about ${total} with the ${figures} interactive figures · `));
});
