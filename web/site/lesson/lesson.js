// The lesson page: KaTeX formulas of the prose, the self-check, progress in the URL hash, and the
// composition of the library's elements (sections 1–8 and 10: <mha-layer-map>, <mha-widget>, <mha-stepper>,
// <mha-wo-mix>, <mha-causal-mask>, <mha-cross-attention>, <mha-model-table>, <mha-cost-ledger>,
// <mha-flash-attention>, <mha-kv-calculator>; sections 9–11: trained.js). Every number shown comes from the engine, inside the elements.
import katex from 'katex';
import { getModelEngine } from '../../lib/components/index.js';
import '../../lib/components/lesson-elements.js';
import { watchBoxes } from '../../lib/components/base/scroll-cue.js';
import { composeTrained } from './trained.js';
import { composeOwnModel } from './own-model.js';

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

function tex(el, src, display = true) {
  katex.render(src, el, { displayMode: display, throwOnError: false, output: 'htmlAndMathml' });
}

// ---------------------------------------------------------------------------------- URL state
const SECTIONS = ['map', 'why', 'split', 'worked', 'mix', 'causal', 'cross', 'scale', 'trained', 'circuits', 'gqa', 'stories', 'own', 'recap', 'check'];
const state = { section: '', step: 0, head: 0, h: null, seen: new Set(), answers: {} };

function parseHash() {
  const raw = decodeURIComponent(location.hash.slice(1));
  if (!raw) return;
  for (const part of raw.split('&')) {
    const [k, v] = part.split('=');
    if (v === undefined) { if (SECTIONS.includes(k)) state.section = k; continue; }
    if (k === 'step') state.step = Math.max(0, Math.min(7, Number(v) || 0));
    else if (k === 'head') state.head = Number(v) === 1 ? 1 : 0;
    else if (k === 'h') state.h = Number(v) || null;
    else if (k === 'seen') v.split('').forEach((c, i) => { if (c === '1') state.seen.add(SECTIONS[i]); });
    else if (k.startsWith('q.')) state.answers[k.slice(2)] = v;
  }
}

function writeHash() {
  const parts = [];
  if (state.section) parts.push(state.section);
  parts.push(`step=${state.step}`, `head=${state.head}`);
  if (state.h) parts.push(`h=${state.h}`);
  parts.push(`seen=${SECTIONS.map((s) => (state.seen.has(s) ? 1 : 0)).join('')}`);
  for (const [k, v] of Object.entries(state.answers)) if (v !== '') parts.push(`q.${k}=${encodeURIComponent(v)}`);
  const hash = '#' + parts.join('&');
  if (hash !== location.hash) history.replaceState(null, '', hash);
}

function updateProgress() {
  const k = state.seen.size;
  $('#progress-text').textContent = `${k} / ${SECTIONS.length} sections visited`;
  $('#progress-bar').style.width = `${(100 * k) / SECTIONS.length}%`;
  for (const a of $$('.toc a')) {
    const id = a.getAttribute('href').slice(1);
    a.classList.toggle('seen', state.seen.has(id));
    if (id === state.section) a.setAttribute('aria-current', 'location');
    else a.removeAttribute('aria-current');
  }
}

function watchSections() {
  const io = new IntersectionObserver((entries) => {
    let changed = false;
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      const id = e.target.id;
      if (!state.seen.has(id)) { state.seen.add(id); changed = true; }
    }
    // the current section: the last one whose top has scrolled above 40% of the viewport
    const line = innerHeight * 0.4;
    let current = '';
    for (const id of SECTIONS) if (document.getElementById(id).getBoundingClientRect().top < line) current = id;
    if (current !== state.section && (current || state.section)) { state.section = current; changed = true; }
    if (changed) { updateProgress(); writeHash(); }
  }, { threshold: [0, 0.25, 0.6] });
  SECTIONS.forEach((id) => io.observe(document.getElementById(id)));
  addEventListener('scroll', () => {
    const line = innerHeight * 0.4;
    let current = '';
    for (const id of SECTIONS) if (document.getElementById(id).getBoundingClientRect().top < line) current = id;
    if (current !== state.section) { state.section = current; updateProgress(); writeHash(); }
  }, { passive: true });
  addEventListener('hashchange', () => {
    const prev = { ...state, seen: new Set(state.seen), answers: { ...state.answers } };
    parseHash();
    // a plain "#section" link keeps the rest of the state
    if (!location.hash.includes('=')) { Object.assign(state, { ...prev, section: state.section }); }
    syncStepper();
    state.seen.add(state.section);
    updateProgress();
    writeHash();
  });
}

// ---------------------------------------------------------------------------------- sections 3–6
// The elements compute everything; the page keeps the stepper's step and head in the URL hash.
function syncStepper() {
  const stepper = $('#stepper');
  stepper.step = state.step;
  stepper.head = state.head;
}

// The layer map drives the rest: a tensor selected there opens the stepper (section 4) on the step
// that computes it, and the map follows the widget's h (both draw T = 5, d_model = 24).
const STEP_OF_TENSOR = { wq: 0, q: 0, wk: 1, k: 1, wv: 2, v: 2, scores: 3, weights: 4, heads: 5, concat: 6, wo: 7, attn: 7 };

function composeLayerMap() {
  const map = $('#layer-map');
  const note = $('#layer-map-note');
  map.addEventListener('select', (e) => {
    const step = STEP_OF_TENSOR[e.detail.tensor];
    if (step === undefined) { note.hidden = true; return; }
    state.step = step;
    syncStepper();
    writeHash();
    note.hidden = false;
  });
  const widget = $('#widget');
  const follow = () => { if (widget.heads) map.setAttribute('heads', String(widget.heads)); };
  widget.addEventListener('change', (e) => { if (e.target === widget) follow(); });
  if (state.h) map.setAttribute('heads', String(state.h));
}

function composeLessonElements() {
  const stepper = $('#stepper');
  syncStepper();
  composeLayerMap();
  stepper.addEventListener('change', (e) => {
    if (e.target !== stepper) return;
    state.step = e.detail.step;
    state.head = e.detail.head;
    writeHash();
  });
}

/** Resolves when a lesson element has its first engine result (true) or shows an engine error (false). */
function firstResult(el, has, event = 'mha-computed') {
  if (has(el)) return Promise.resolve(true);
  if (el.error) return Promise.resolve(false);
  return new Promise((resolve) => {
    el.addEventListener(event, () => resolve(true), { once: true });
    el.addEventListener('mha-error', () => resolve(false), { once: true });
  });
}

// ---------------------------------------------------------------------------------- self-check
const FEEDBACK = {
  one: ['Right: one softmax row is one budget of weight; two relations must share it.', 'Not quite. The weights of a row are one probability distribution: what one key gets, the others lose.'],
  dk: ['Right: 512 / 8 = 64.', 'Not quite. Divide d_model by the number of heads.'],
  ratio: ['Right: h · d · (d/h) = d², the single-head size.', 'Not quite. Each head has d × d/h entries; multiply by h.'],
  shape: ['Right: batch, heads, queries, keys.', 'Not quite. Each head has one T × T grid per sequence.'],
  wo: ['Right: W_O is the only place the heads are mixed.', 'Not quite. Concatenation only places columns side by side; look for the first sum over columns of several heads.'],
  gqa: ['Right: 64 / 8 = 8 times less K and V to store.', 'Not quite. The cache holds one K and one V per K/V head.'],
  causal: ['Right: row i keeps keys 1 … i, so 1 + 2 + 3 + 4 = 10.', 'Not quite. Query i may attend to keys 1 … i only; add up the rows.'],
  cross: ['Right: heads, target queries, source keys.', 'Not quite. One row per query (target token), one column per key (source token), for each head.'],
  cost: ['Right: h grids of T × T weights, and the softmax over each; the matrix products and W_Q stay the same.', 'Not quite. W_Q over all heads stays d_model²; count the T × T grids instead.'],
  induction: ['Right: an induction head attends to what followed an earlier copy and copies it.', 'Not quite. That is another kind of head; an induction head completes a pattern seen earlier in the text.'],
};

// Each question is graded when its "Check" button is pressed (or Enter in its field), never while
// the arrow keys pass over its options; changing an answer clears its grade. The score counts the
// checked answers that are right; checked answers are kept in the URL hash and graded again on load.
function setupQuiz() {
  const form = $('#quiz');
  const sets = $$('fieldset.q', form);
  const checked = new Map();   // question → the answer its Check graded
  const valueOf = (fs) => {
    const num = fs.querySelector('input[type=number]');
    return num ? num.value.trim() : (fs.querySelector('input:checked')?.value ?? '');
  };
  const grade = (fs) => {
    const q = fs.dataset.q;
    const val = valueOf(fs);
    const fb = fs.querySelector('.feedback');
    fs.classList.remove('right', 'wrong');
    if (!checked.has(q)) { fb.textContent = ''; return false; }
    const num = fs.querySelector('input[type=number]');
    const ok = num ? Number(val) === Number(fs.dataset.answer) : val === fs.dataset.answer;
    fs.classList.add(ok ? 'right' : 'wrong');
    fb.textContent = FEEDBACK[q][ok ? 0 : 1];
    return ok;
  };
  const score = () => {
    $('#quiz-score').textContent = `${sets.filter((fs) => checked.has(fs.dataset.q) && fs.classList.contains('right')).length} / ${sets.length}`;
  };
  const check = (fs) => {
    const q = fs.dataset.q;
    const val = valueOf(fs);
    if (val === '') {
      checked.delete(q);
      delete state.answers[q];
      grade(fs);
      fs.querySelector('.feedback').textContent = 'Choose or type an answer first.';
    } else {
      checked.set(q, val);
      state.answers[q] = val;
      grade(fs);
    }
    score();
    writeHash();
  };
  for (const fs of sets) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'check small';
    button.textContent = 'Check';
    fs.querySelector('.feedback').before(button);
    button.addEventListener('click', () => check(fs));
    const changed = () => {
      if (!checked.has(fs.dataset.q) || checked.get(fs.dataset.q) === valueOf(fs)) return;
      checked.delete(fs.dataset.q);
      grade(fs);
      score();
    };
    fs.addEventListener('input', changed);
    fs.addEventListener('change', changed);
    // Enter in a number field checks its question
    fs.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter' || !e.target.matches('input[type=number]')) return;
      e.preventDefault();
      check(fs);
    });
  }
  form.addEventListener('submit', (e) => e.preventDefault());
  // restore the checked answers from the URL
  for (const fs of sets) {
    const v = state.answers[fs.dataset.q];
    if (!v) continue;
    const num = fs.querySelector('input[type=number]');
    if (num) num.value = v;
    else { const r = fs.querySelector(`input[value="${CSS.escape(v)}"]`); if (r) r.checked = true; }
    checked.set(fs.dataset.q, v);
    grade(fs);
  }
  score();
}

// ---------------------------------------------------------------------------------- start
async function main() {
  const status = $('#engine-status');   // <mha-engine-info>: starts loading the engine first
  // The page's engine and the engine worker of its trained models, for the browser console and the
  // soak test (wasm memory figures).
  status.addEventListener('mha-engine', (e) => { window.mhaLesson = { engine: e.detail.engine, models: getModelEngine }; });
  parseHash();
  for (const el of $$('[data-tex]')) tex(el, el.dataset.tex, true);
  watchBoxes($$('.tex[data-tex]'));   // a formula wider than a phone takes focus, to be scrolled by keyboard
  setupQuiz();
  composeLessonElements();
  composeTrained();
  composeOwnModel();
  const widget = $('#widget');
  if (state.h) widget.heads = state.h;
  widget.addEventListener('change', (e) => { if (e.target === widget) { state.h = e.detail.heads; writeHash(); } });
  updateProgress();
  watchSections();
  if (state.section) document.getElementById(state.section)?.scrollIntoView();

  const ok = await Promise.all([
    firstResult(status, (el) => el.info, 'mha-engine'),
    firstResult($('#stepper'), (el) => el.trace),
    firstResult($('#wo-mix'), (el) => el.contributions),
    firstResult($('#models'), (el) => el.rows),
    firstResult($('#kv'), (el) => el.result),
  ]);
  document.body.dataset.ready = ok.includes(false) ? 'error' : 'true';
}

main();
