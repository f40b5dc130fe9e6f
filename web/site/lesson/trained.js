// The trained-heads section: small character-level transformers trained on fortune-cookie text
// (scripts/train/), run by the engine through the public API only (mha.loadModel): every head's
// attention with its measured type, ablation by clicking a head, the h = 1 vs h = 4 twins' held-out
// loss, generation with the KV cache, and induction on a phrase the student repeats.
import { TYPE_THRESHOLD, BROAD_THRESHOLD } from '../../lib/src/index.js';

const $ = (sel, root = document) => root.querySelector(sel);
const show = (ch) => (ch === ' ' ? '␣' : ch === '\n' ? '↵' : ch);
const f2 = (v) => v.toFixed(2);
const f3 = (v) => v.toFixed(3);
const SCORE_OF = {
  'previous-token': 'previous', 'two-back': 'twoBack', 'current-token': 'current', 'first-token': 'first', induction: 'induction',
};

/** The score that earned a head its label (entropy for broad and mixed heads). */
function labelScore(h) {
  const key = SCORE_OF[h.type] ?? 'entropy';
  return `${key === 'entropy' ? 'entropy' : 'score'} ${f2(h.scores[key])}`;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') e.textContent = v;
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  e.append(...children);
  return e;
}

/** The rows of `matrix` [T, T] of head j of a per-layer [h, T, T] tensor, as nested arrays. */
function headMatrix(t, j) {
  const [, T, K] = t.shape;
  const rows = [];
  for (let r = 0; r < T; r++) rows.push(Array.from(t.data.subarray((j * T + r) * K, (j * T + r + 1) * K)));
  return rows;
}

/** Mean loss in bits per character of a model over texts (each scored as run() scores it). */
function heldoutLoss(lm, texts) {
  let sum = 0;
  let n = 0;
  for (const t of texts) {
    const r = lm.run(t);
    sum += r.loss * (t.length - 1);
    n += t.length - 1;
  }
  return sum / n;
}

export async function setupTrained(mha) {
  const section = $('#trained');
  const base = new URL('models/', document.baseURI);
  const manifest = await (await fetch(new URL('index.json', base))).json();
  const main = manifest.models.find((m) => m.numHeads === 4 && m.seed === 0);
  const lm = await mha.loadModel(new URL(main.file, base));
  const tr = lm.training;
  const cfg = lm.config;
  const heads = lm.heads;

  $('#trained-about').textContent = `This model: ${cfg.numLayers} layers, h = ${cfg.numHeads} heads of d_k = ${cfg.dK}, ` +
    `d_model = ${cfg.dModel}, a context of ${cfg.context} characters, ${(main.bytes / 1000).toFixed(0)} KB of float16 weights. ` +
    `Trained for ${tr.steps} steps (${Math.round(tr.seconds / 60)} minutes on 2 CPU cores) on ${tr.corpus.split(' (')[0]} text; ` +
    `${tr.curriculum}. Held-out loss: ${f2(tr.heldout_bpc)} bits per character.`;
  $('#trained-thresholds').textContent = `A head is labelled with its strongest pattern when that score reaches ${TYPE_THRESHOLD}; ` +
    `otherwise "broad" when its attention is spread out (normalised entropy ≥ ${BROAD_THRESHOLD}), else "mixed". ` +
    'The scores are measured by this page on held-out text stored with the model.';

  // ---- every head, with ablation ---------------------------------------------------------
  const text = $('#trained-text');
  text.maxLength = cfg.context;
  const off = new Set();   // "layer:head"
  const grid = $('#trained-heads');
  const maps = [];
  const toggles = [];
  for (let l = 0; l < cfg.numLayers; l++) {
    const row = el('div', { class: 'trained-layer', role: 'group', 'aria-label': `Layer ${l + 1}` },
      el('h3', { text: `Layer ${l + 1}` }));
    for (let j = 0; j < cfg.numHeads; j++) {
      const h = heads.find((x) => x.layer === l && x.head === j);
      // A switch per head: checked = the head is on; the visible text is its accessible name.
      const btn = el('button', { type: 'button', role: 'switch', class: 'head-toggle', 'aria-checked': 'true', 'data-layer': l, 'data-head': j },
        el('span', { class: 'head-name', text: `L${l + 1} · head ${j + 1}` }),
        el('span', { class: `head-type t-${h.type}`, text: h.type }),
        el('span', { class: 'head-score', text: labelScore(h) }));
      const map = el('mha-heatmap', { compact: true, label: `Layer ${l + 1}, head ${j + 1} (${h.type})`, 'data-layer': l, 'data-head': j });
      maps.push(map);
      const fig = el('div', { class: 'trained-head' }, btn, map);
      const set = (isOff) => {
        if (isOff) off.add(`${l}:${j}`); else off.delete(`${l}:${j}`);
        btn.setAttribute('aria-checked', String(!isOff));
        fig.classList.toggle('off', isOff);
      };
      toggles.push(set);
      btn.addEventListener('click', () => { set(!off.has(`${l}:${j}`)); changed(); });
      row.append(fig);
    }
    grid.append(row);
  }

  const lossOut = $('#trained-loss');
  const nextOut = $('#trained-next');
  const offOut = $('#trained-off');
  function update() {
    const value = text.value;
    if (value.length < 1) {
      lossOut.textContent = '—';
      nextOut.replaceChildren();
      return;
    }
    const r = lm.run(value, { ablate: ablation() });
    const tokens = r.tokens.map(show);
    for (const map of maps) {
      map.tokens = tokens;
      map.weights = headMatrix(r.attention[Number(map.dataset.layer)], Number(map.dataset.head));
    }
    lossOut.textContent = r.loss === null ? '— (type at least 2 characters)' : `${f3(r.loss)} bits per character`;
    nextOut.replaceChildren(...r.next.map((c) => el('li', {}, el('code', { text: show(c.char) }), ` ${(100 * c.p).toFixed(1)} %`)));
    offOut.textContent = off.size ? `${off.size} head${off.size > 1 ? 's' : ''} switched off.` : 'All heads on.';
    section.dataset.loss = r.loss === null ? '' : String(r.loss);
  }
  const ablation = () => [...off].map((k) => k.split(':').map(Number));
  // A change of text or of the switched-off heads recomputes the heads and restarts generation.
  const changed = () => { update(); startGen(); };
  text.addEventListener('input', changed);
  $('#trained-all-on').addEventListener('click', () => { for (const set of toggles) set(false); changed(); });
  update();

  // ---- induction on a phrase the student repeats ----------------------------------------
  const phrase = $('#induction-phrase');
  const best = heads.filter((h) => h.layer > 0).sort((a, b) => b.scores.induction - a.scores.induction)[0];
  const indMap = $('#induction-map');
  const indOut = $('#induction-result');
  function induction() {
    const p = phrase.value.slice(0, Math.floor((cfg.context - 1) / 2));
    if (p.length < 2) { indOut.textContent = 'Type a phrase of at least 2 characters.'; return; }
    const full = `${p} ${p}`;
    const r = lm.run(full);
    const V = cfg.vocabSize;
    const bits = (from, to) => {
      let s = 0;
      for (let t = from; t < to; t++) s -= r.logProbs.data[t * V + r.ids[t + 1]];
      return s / (to - from) / Math.LN2;
    };
    const n = p.length;
    // Predictions of the characters of each copy after its first one: copy 1 = ids 1..n-1, copy 2 = ids n+2..2n.
    const first = bits(0, n - 1);
    const second = bits(n + 1, 2 * n);
    indMap.tokens = r.tokens.map(show);
    indMap.weights = headMatrix(r.attention[best.layer], best.head);
    indMap.label = `Layer ${best.layer + 1}, head ${best.head + 1} (${best.type}, induction score ${f2(best.scores.induction)})`;
    indOut.textContent = `First copy: ${f2(first)} bits per character. Second copy: ${f2(second)} bits per character` +
      (second < first ? ` — ${f2(first / Math.max(second, 1e-9))}× less surprise the second time.` : ' — no easier the second time for this phrase.');
    section.dataset.induction = `${first} ${second}`;
  }
  phrase.addEventListener('input', induction);
  induction();

  // ---- generation with the KV cache ------------------------------------------------------
  const genText = $('#gen-text');
  const genCache = $('#gen-cache');
  const genRows = $('#gen-rows');
  const rowMaps = [];
  for (let l = 0; l < cfg.numLayers; l++) {
    for (let j = 0; j < cfg.numHeads; j++) {
      const h = heads.find((x) => x.layer === l && x.head === j);
      const m = el('mha-heatmap', { compact: true, 'no-save': true, label: `Layer ${l + 1}, head ${j + 1}: newest query` });
      rowMaps.push([l, j, m]);
      genRows.append(el('span', { class: 'gen-label', text: `L${l + 1} · head ${j + 1} (${h.type})` }), m);
    }
  }
  let gen = null;
  let prompt = '';
  function startGen() {
    gen?.dispose();
    prompt = text.value || 'The ';
    gen = lm.generator(prompt, { temperature: Number($('#gen-temp').value), seed: 7, ablate: ablation() });
    genText.replaceChildren(el('span', { class: 'prompt', text: prompt }));
    genCache.textContent = `KV cache: ${gen.cacheLength} of ${cfg.context} positions per layer.`;
    for (const [, , m] of rowMaps) m.weights = [];
  }
  function step(n) {
    let s;
    for (let i = 0; i < n; i++) s = gen.step();
    const gen1 = gen.text.slice(prompt.length);
    genText.replaceChildren(el('span', { class: 'prompt', text: prompt }), el('mark', { text: gen1 }));
    genCache.textContent = `KV cache: ${s.cacheLength} of ${cfg.context} positions per layer` +
      // The newest character is not in the cache yet: it is fed at the next step.
      (s.cacheLength < gen.text.length - 1 ? ' (it filled up once and was refilled with the last half of the text)' : '') + '.';
    section.dataset.cache = String(s.cacheLength);
    const keys = Array.from(gen.text.slice(-s.cacheLength)).map(show);
    for (const [l, j, m] of rowMaps) {
      m.keyTokens = keys.slice(0, s.cacheLength);
      m.tokens = [show(gen.text.at(-2) ?? '')];
      m.weights = [Array.from(s.attention[l].data.subarray(j * s.cacheLength, (j + 1) * s.cacheLength))];
    }
  }
  $('#gen-step').addEventListener('click', () => step(1));
  $('#gen-ten').addEventListener('click', () => step(10));
  $('#gen-reset').addEventListener('click', startGen);
  $('#gen-temp').addEventListener('change', startGen);
  startGen();

  // ---- twins: h = 1 against h = 4, two seeds each ----------------------------------------
  const probes = JSON.parse(lm.metadata.probes).text;
  const rows = [];
  for (const m of manifest.models) {
    const twin = m.file === main.file ? lm : await mha.loadModel(new URL(m.file, base));
    rows.push({ ...m, live: heldoutLoss(twin, probes) });
    if (twin !== lm) twin.dispose();
  }
  rows.sort((a, b) => a.numHeads - b.numHeads || a.seed - b.seed);
  const tbody = $('#twins tbody');
  tbody.replaceChildren(...rows.map((m) => el('tr', {},
    el('td', { text: `h = ${m.numHeads}` }), el('td', { text: String(m.seed) }),
    el('td', { class: 'num', text: f3(m.live) }), el('td', { class: 'num', text: f3(m.heldoutBpc) }))));
  const by = (h) => rows.filter((m) => m.numHeads === h).map((m) => m.live);
  const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
  const one = by(1);
  const four = by(4);
  const gap = mean(one) - mean(four);
  const spread = Math.max(Math.max(...one) - Math.min(...one), Math.max(...four) - Math.min(...four));
  $('#twins-result').textContent = `On these ${probes.length} held-out passages (${probes.reduce((a, t) => a + t.length, 0)} characters), ` +
    `h = 1 scores ${f3(mean(one))} and h = 4 scores ${f3(mean(four))} bits per character (mean of ${one.length} seeds each): ` +
    (gap > spread
      ? `four heads are better by ${f3(gap)} bits, more than the ${f3(spread)} bits that separate two seeds of the same model.`
      : gap > 0
        ? `four heads are better by ${f3(gap)} bits, but two seeds of one model differ by up to ${f3(spread)}, so this gap is within the noise.`
        : `four heads are not better here (${f3(-gap)} bits worse); seeds differ by up to ${f3(spread)}.`);
  section.dataset.ready = 'true';
}
