// The lesson page: KaTeX formulas, the restaurant stepper, W_O contributions, real-scale tables,
// the KV-cache calculator, the trained heads (trained.js), the self-check, and progress in the URL hash.
// Every number shown comes from the engine (mha.passport, layer.trace, layer.forward).
import katex from 'katex';
import { getEngine, toMatrix, fmt } from '../../lib/components/index.js';
import { PEOPLE, FEATURES, X0, HEADS, WO, CONCAT_COLS, MODELS } from './data.js';
import { setupTrained } from './trained.js';

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

function tex(el, src, display = true) {
  katex.render(src, el, { displayMode: display, throwOnError: false, output: 'htmlAndMathml' });
}
const t = (s) => `\\text{${String(s).replace(/([_&%$#{}])/g, '\\$1')}}`;
const n3 = (v) => (v < 0 ? `(${fmt(v, 3).replace('\u2212', '-')})` : fmt(v, 3));
const n2 = (v) => (v < 0 ? `(${fmt(v, 2).replace('\u2212', '-')})` : fmt(v, 2));

// ---------------------------------------------------------------------------------- URL state
const SECTIONS = ['why', 'split', 'worked', 'mix', 'scale', 'gqa', 'trained', 'check'];
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
    state.seen.add(state.section);
    updateProgress();
    writeHash();
  });
}

// ---------------------------------------------------------------------------------- matrices
/**
 * A labelled matrix as a <table>. kind: 'input' (editable), 'operand', 'result' (focusable).
 */
function matrixTable({ caption, rows, cols, values, kind = 'operand', digits = 3, split = -1, id, testid, focusable = kind === 'result' }) {
  const table = document.createElement('table');
  table.className = `matrix ${kind}`;
  if (id) table.id = id;
  if (testid) table.dataset.testid = testid;
  const cap = table.createCaption();
  cap.innerHTML = caption;
  const head = table.createTHead().insertRow();
  const corner = document.createElement('td');
  corner.className = 'corner';
  head.append(corner);
  cols.forEach((c, j) => {
    const th = document.createElement('th');
    th.scope = 'col'; th.textContent = c;
    if (j === split) th.classList.add('split');
    head.append(th);
  });
  const body = table.createTBody();
  values.forEach((row, r) => {
    const tr = body.insertRow();
    const th = document.createElement('th');
    th.scope = 'row'; th.textContent = rows[r];
    tr.append(th);
    row.forEach((v, c) => {
      const td = tr.insertCell();
      td.dataset.r = r; td.dataset.c = c;
      if (c === split) td.classList.add('split');
      if (kind === 'input') {
        const inp = document.createElement('input');
        inp.type = 'number'; inp.step = '0.01'; inp.value = String(v);
        inp.setAttribute('aria-label', `${rows[r]}, ${cols[c]}`);
        inp.dataset.r = r; inp.dataset.c = c;
        td.append(inp);
      } else {
        td.textContent = fmt(v, digits);
        td.dataset.value = String(v);
        if (focusable) {
          td.tabIndex = 0;
          td.setAttribute('aria-label', `${rows[r]}, ${cols[c]}: ${fmt(v, digits)}`);
        }
      }
    });
  });
  return table;
}

const transpose = (m) => m[0].map((_, j) => m.map((row) => row[j]));

// ---------------------------------------------------------------------------------- worked example
const STEPS = [
  { key: 'q', title: 'Queries: Q = X · W_Q', short: 'Q' },
  { key: 'k', title: 'Keys: K = X · W_K', short: 'K' },
  { key: 'v', title: 'Values: V = X · W_V', short: 'V' },
  { key: 'scores', title: 'Scores: Q · Kᵀ / √d_k', short: 'scores' },
  { key: 'weights', title: 'Attention weights: softmax of each row', short: 'softmax' },
  { key: 'output', title: 'Head output: weights · V', short: 'A·V' },
  { key: 'concat', title: 'Concatenate the heads', short: 'concat' },
  { key: 'final', title: 'Project back: concat · W_O', short: 'W_O' },
];

const worked = {
  X: X0.map((r) => r.slice()),
  layer: null,
  layersMix: [],
  trace: null,
};

function headMats(i) {
  const h = worked.trace.heads[i];
  return {
    q: toMatrix(h.q), k: toMatrix(h.k), v: toMatrix(h.v), scores: toMatrix(h.scores),
    weights: toMatrix(h.weights), output: toMatrix(h.output),
  };
}

function stepView(stepIdx, hi) {
  const H = HEADS[hi];
  const m = headMats(hi);
  const dk = H.wQ[0].length;
  const dv = H.wV[0].length;
  const sup = `<sup>(${hi + 1})</sup>`;
  const X = worked.X;
  const concat = toMatrix(worked.trace.concat);
  const out = toMatrix(worked.trace.output);
  switch (stepIdx) {
    case 0: case 1: case 2: {
      const key = ['q', 'k', 'v'][stepIdx];
      const W = [H.wQ, H.wK, H.wV][stepIdx];
      const cols = [H.qCols, H.kCols, H.vCols][stepIdx];
      const L = ['Q', 'K', 'V'][stepIdx];
      return {
        tex: `${L}^{(${hi + 1})} = X\\,W_${L}^{(${hi + 1})} \\quad [3 \\times 6] \\cdot [6 \\times ${W[0].length}] \\to [3 \\times ${W[0].length}]`,
        text: stepIdx === 0
          ? `Each person's six features are projected onto the ${W[0].length} directions head ${hi + 1} asks about (${cols.join(', ')}).`
          : stepIdx === 1
            ? `The same people, projected onto what each of them can offer as an answer to head ${hi + 1}'s question.`
            : `What each person passes on when someone attends to them: ${dv} value features for head ${hi + 1}.`,
        left: { caption: 'X', rows: PEOPLE, cols: FEATURES, values: X, digits: X.flat().every((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-9) ? 2 : 3 },
        right: { caption: `W<sub>${L}</sub>${sup}`, rows: FEATURES, cols, values: W, digits: 2 },
        result: { caption: `${L}${sup}`, rows: PEOPLE, cols, values: m[key] },
        explain: (r, c) => {
          const terms = X[r].map((x, j) => `${n2(x)}\\cdot${n2(W[j][c])}`).join(' + ');
          return `${L}_{${t(PEOPLE[r])},\\,${t(cols[c])}} = ${terms} = ${n3(m[key][r][c])}`;
        },
        link: (r, c) => ({ left: { row: r }, right: { col: c } }),
      };
    }
    case 3: {
      return {
        tex: `S^{(${hi + 1})} = \\frac{Q^{(${hi + 1})} K^{(${hi + 1})\\top}}{\\sqrt{d_k}} = \\frac{Q K^{\\top}}{\\sqrt{${dk}}} \\quad [3 \\times ${dk}] \\cdot [${dk} \\times 3] \\to [3 \\times 3]`,
        text: 'Every query is compared with every key by a dot product; dividing by √d_k keeps the numbers in a range where softmax is not saturated.',
        left: { caption: `Q${sup}`, rows: PEOPLE, cols: H.qCols, values: m.q },
        right: { caption: `K${sup}ᵀ`, rows: H.kCols, cols: PEOPLE, values: transpose(m.k) },
        result: { caption: `scores S${sup}`, rows: PEOPLE, cols: PEOPLE, values: m.scores },
        explain: (r, c) => {
          const terms = m.q[r].map((q, j) => `${n3(q)}\\cdot${n3(m.k[c][j])}`).join(' + ');
          return `S_{${t(PEOPLE[r])},\\,${t(PEOPLE[c])}} = \\frac{${terms}}{\\sqrt{${dk}}} = ${n3(m.scores[r][c])}`;
        },
        link: (r, c) => ({ left: { row: r }, right: { col: c } }),
      };
    }
    case 4: {
      return {
        tex: `A^{(${hi + 1})}_{r,c} = \\frac{e^{S_{r,c}}}{\\sum_{j} e^{S_{r,j}}} \\quad [3 \\times 3]`,
        text: 'Softmax turns each row of scores into weights that are positive and add up to 1: one distribution per query, per head.',
        left: { caption: `scores S${sup}`, rows: PEOPLE, cols: PEOPLE, values: m.scores },
        right: null,
        result: { caption: `attention weights A${sup}`, rows: PEOPLE, cols: PEOPLE, values: m.weights },
        explain: (r, c) => {
          const den = m.scores[r].map((s) => `e^{${n3(s)}}`).join(' + ');
          return `A_{${t(PEOPLE[r])},\\,${t(PEOPLE[c])}} = \\frac{e^{${n3(m.scores[r][c])}}}{${den}} = ${n3(m.weights[r][c])}`;
        },
        link: (r) => ({ left: { row: r } }),
      };
    }
    case 5: {
      return {
        tex: `\\text{head}_${hi + 1} = A^{(${hi + 1})} V^{(${hi + 1})} \\quad [3 \\times 3] \\cdot [3 \\times ${dv}] \\to [3 \\times ${dv}]`,
        text: `Each person's result is a blend of everybody's values, mixed in the proportions of their row of weights.`,
        left: { caption: `A${sup}`, rows: PEOPLE, cols: PEOPLE, values: m.weights },
        right: { caption: `V${sup}`, rows: PEOPLE, cols: H.vCols, values: m.v },
        result: { caption: `head ${hi + 1} output`, rows: PEOPLE, cols: H.vCols, values: m.output },
        explain: (r, c) => {
          const terms = m.weights[r].map((a, j) => `${n3(a)}\\cdot${n3(m.v[j][c])}`).join(' + ');
          return `\\text{head}_{${hi + 1}}[${t(PEOPLE[r])},${t(H.vCols[c])}] = ${terms} = ${n3(m.output[r][c])}`;
        },
        link: (r, c) => ({ left: { row: r }, right: { col: c } }),
      };
    }
    case 6: {
      const o1 = toMatrix(worked.trace.heads[0].output);
      const o2 = toMatrix(worked.trace.heads[1].output);
      return {
        tex: `\\big[\\,\\text{head}_1 \\;\\|\\; \\text{head}_2\\,\\big] \\quad [3 \\times 3] \\,\\|\\, [3 \\times 2] \\to [3 \\times 5]`,
        text: 'The heads are laid side by side, 3 + 2 = 5 columns. No arithmetic happens here, and each column still belongs to one head.',
        left: { caption: 'head 1 output', rows: PEOPLE, cols: HEADS[0].vCols, values: o1 },
        right: { caption: 'head 2 output', rows: PEOPLE, cols: HEADS[1].vCols, values: o2 },
        result: { caption: 'concat', rows: PEOPLE, cols: CONCAT_COLS, values: concat, split: 3 },
        explain: (r, c) => {
          const h = c < 3 ? 1 : 2, cc = c < 3 ? c : c - 3;
          const name = HEADS[h - 1].vCols[cc];
          return `\\text{concat}[${t(PEOPLE[r])},\\,${c + 1}] = \\text{head}_${h}[${t(PEOPLE[r])},${t(name)}] = ${n3(concat[r][c])}`;
        },
        link: (r, c) => (c < 3 ? { left: { row: r, col: c } } : { right: { row: r, col: c - 3 } }),
      };
    }
    default: {
      return {
        tex: `\\text{output} = \\text{concat}\\cdot W_O \\quad [3 \\times 5] \\cdot [5 \\times 6] \\to [3 \\times 6]`,
        text: 'W_O maps the 5 concatenated features back to the 6 input features. Each output number adds up contributions from both heads.',
        left: { caption: 'concat', rows: PEOPLE, cols: CONCAT_COLS, values: concat, split: 3 },
        right: { caption: 'W<sub>O</sub>', rows: CONCAT_COLS, cols: FEATURES, values: WO, digits: 2 },
        result: { caption: 'output', rows: PEOPLE, cols: FEATURES, values: out },
        explain: (r, c) => {
          const terms = concat[r].map((x, j) => `${n3(x)}\\cdot${n2(WO[j][c])}`);
          return `\\text{out}_{${t(PEOPLE[r])},\\,${t(FEATURES[c])}} = \\underbrace{${terms.slice(0, 3).join(' + ')}}_{\\text{head 1}} + \\underbrace{${terms.slice(3).join(' + ')}}_{\\text{head 2}} = ${n3(out[r][c])}`;
        },
        link: (r, c) => ({ left: { row: r }, right: { col: c } }),
      };
    }
  }
}

function highlight(table, sel) {
  if (!table || !sel) return;
  for (const td of $$('td[data-r]', table)) {
    const r = Number(td.dataset.r), c = Number(td.dataset.c);
    const on = (sel.row === undefined || sel.row === r) && (sel.col === undefined || sel.col === c);
    td.classList.toggle('hl', on);
  }
}

function renderStep() {
  if (!worked.trace) return;
  const s = state.step, hi = state.head;
  const view = stepView(s, hi);
  $('#step-title').textContent = `Step ${s + 1} of ${STEPS.length} · ${STEPS[s].title}${s < 6 ? ` · head ${hi + 1} (${HEADS[hi].name})` : ''}`;
  tex($('#step-tex'), view.tex);
  $('#step-text').textContent = view.text;
  $('#step-count').textContent = `${s + 1} / ${STEPS.length}`;
  $('#step-prev').disabled = s === 0;
  $('#step-next').disabled = s === STEPS.length - 1;
  for (const b of $$('#step-tabs button')) b.setAttribute('aria-pressed', String(Number(b.dataset.step) === s));
  for (const b of $$('#head-tabs button')) {
    b.setAttribute('aria-pressed', String(Number(b.dataset.head) === hi));
    b.disabled = s >= 6;
  }
  const host = $('#step-matrices');
  host.replaceChildren();
  const left = matrixTable({ ...view.left, kind: 'operand' });
  const op = document.createElement('span');
  op.className = 'op'; op.textContent = s === 4 ? 'softmax →' : s === 6 ? '‖' : s === 3 ? '· / √d_k' : '·';
  op.setAttribute('aria-hidden', 'true');
  host.append(left, op);
  let right = null;
  if (view.right) {
    right = matrixTable({ ...view.right, kind: 'operand' });
    const eq = document.createElement('span');
    eq.className = 'op'; eq.textContent = '='; eq.setAttribute('aria-hidden', 'true');
    host.append(right, eq);
  }
  const result = matrixTable({ ...view.result, kind: 'result', testid: 'step-result' });
  host.append(result);
  const show = (td) => {
    const r = Number(td.dataset.r), c = Number(td.dataset.c);
    $$('td.hl', host).forEach((x) => x.classList.remove('hl'));
    td.classList.add('hl');
    const link = view.link(r, c);
    highlight(left, link.left);
    highlight(right, link.right);
    tex($('#cell-formula'), view.explain(r, c), false);
  };
  for (const td of $$('td[data-r]', result)) {
    td.addEventListener('mouseenter', () => show(td));
    td.addEventListener('focus', () => show(td));
  }
  $('#cell-formula').innerHTML = '<span class="muted">Hover or focus a number in the result to see which row and column produced it.</span>';
}

function renderWorkedOutputs(mha) {
  const tr = worked.trace;
  const heads = $('#worked-heads');
  heads.weights = tr.heads.map((h) => toMatrix(h.weights));
  heads.tokens = PEOPLE;
  heads.dK = HEADS.map((h) => h.wQ[0].length);
  heads.headNames = HEADS.map((h) => h.name);
  heads.showValues = true;

  const out = toMatrix(tr.output);
  const final = matrixTable({ caption: 'output = concat · W<sub>O</sub> (engine values)', rows: PEOPLE, cols: FEATURES, values: out, kind: 'result', focusable: false, id: 'final-output' });
  final.querySelector('td[data-r="0"][data-c="1"]').id = 'alex-cheap';
  $('#final-table').replaceChildren(final);

  // Section 4: the layer again with one head's rows of W_O zeroed, computed by the engine.
  const parts = worked.layersMix.map((l) => toMatrix(l.forward(worked.X, { needWeights: false }).output)[0]);
  const rows = ['from head 1 only', 'from head 2 only', 'full layer'];
  const mix = matrixTable({ caption: 'Alex\'s output, split by head', rows, cols: FEATURES, values: [...parts, out[0]], kind: 'result', focusable: false, id: 'mix-output' });
  const note = document.createElement('p');
  note.className = 'mix-note';
  note.innerHTML = `For <q>cheap</q>: ${fmt(parts[0][1])} from the taste head + ${fmt(parts[1][1])} from the budget head = <strong>${fmt(out[0][1])}</strong>. Neither head alone explains the final number.`;
  $('#mix-table').replaceChildren(mix, note);
  void mha;
}

/** Largest magnitude accepted in an editable cell of X (keeps every product far from float32 overflow). */
const X_LIMIT = 1e6;

function recomputeWorked(mha) {
  worked.trace = worked.layer.trace(worked.X);
  renderStep();
  renderWorkedOutputs(mha);
}

function setupWorked(mha) {
  const perHead = HEADS.map((h) => ({ wQ: h.wQ, wK: h.wK, wV: h.wV }));
  worked.layer = mha.createLayer({ dModel: 6, numHeads: 2, bias: false, weights: { heads: perHead, wO: WO } });
  const zeroRows = (from, to) => WO.map((row, j) => (j >= from && j < to ? row.map(() => 0) : row));
  worked.layersMix = [
    mha.createLayer({ dModel: 6, numHeads: 2, bias: false, weights: { heads: perHead, wO: zeroRows(3, 5) } }),
    mha.createLayer({ dModel: 6, numHeads: 2, bias: false, weights: { heads: perHead, wO: zeroRows(0, 3) } }),
  ];

  const xt = matrixTable({ caption: 'X: three people × six features (editable)', rows: PEOPLE, cols: FEATURES, values: worked.X, kind: 'input', id: 'x-input' });
  $('#x-table').replaceChildren(xt);
  // What a user types is only ever read as a number: anything else (text, markup, huge values
  // that would overflow float32) is refused with a message next to the table, and the numbers
  // below keep their last valid state.
  const xError = $('#x-error');
  xt.addEventListener('input', (e) => {
    const inp = e.target;
    const r = Number(inp.dataset.r), c = Number(inp.dataset.c);
    const v = Number(inp.value);
    if (inp.validity.badInput || inp.value.trim() === '' || !Number.isFinite(v) || Math.abs(v) > X_LIMIT) {
      inp.setAttribute('aria-invalid', 'true');
      xError.textContent = `${PEOPLE[r]} · ${FEATURES[c]}: not accepted — enter a number between −${X_LIMIT.toLocaleString('en-US')} and ${X_LIMIT.toLocaleString('en-US')}. The results below still use ${worked.X[r][c]}.`;
      return;
    }
    inp.removeAttribute('aria-invalid');
    if (!xt.querySelector('[aria-invalid="true"]')) xError.textContent = '';
    worked.X[r][c] = v;
    try {
      recomputeWorked(mha);
    } catch (err) {
      xError.textContent = err && err.message ? err.message : String(err);
    }
  });
  $('#x-reset').addEventListener('click', () => {
    xError.textContent = '';
    worked.X = X0.map((r) => r.slice());
    for (const inp of $$('input', xt)) { inp.value = String(worked.X[inp.dataset.r][inp.dataset.c]); inp.removeAttribute('aria-invalid'); }
    recomputeWorked(mha);
  });

  const headTabs = $('#head-tabs');
  HEADS.forEach((h, i) => {
    const b = document.createElement('button');
    b.type = 'button'; b.dataset.head = i;
    b.textContent = `head ${i + 1} · ${h.name} (d_k = ${h.wQ[0].length}, d_v = ${h.wV[0].length})`;
    b.addEventListener('click', () => { state.head = i; renderStep(); writeHash(); });
    headTabs.append(b);
  });
  const stepTabs = $('#step-tabs');
  STEPS.forEach((s, i) => {
    const b = document.createElement('button');
    b.type = 'button'; b.dataset.step = i;
    b.textContent = `${i + 1} ${s.short}`;
    b.setAttribute('aria-label', `${i + 1} ${s.short} (step ${i + 1}: ${s.title})`);
    b.addEventListener('click', () => { state.step = i; renderStep(); writeHash(); });
    stepTabs.append(b);
  });
  $('#step-prev').addEventListener('click', () => { state.step = Math.max(0, state.step - 1); renderStep(); writeHash(); });
  $('#step-next').addEventListener('click', () => { state.step = Math.min(STEPS.length - 1, state.step + 1); renderStep(); writeHash(); });
  recomputeWorked(mha);
}

// ---------------------------------------------------------------------------------- real scale
function setupModels(mha) {
  const body = $('#models tbody');
  for (const m of MODELS) {
    const tr = body.insertRow();
    let dk = '—', params = '—';
    try {
      const p = mha.passport({ seqLen: 1, dModel: m.dModel, numHeads: m.heads, kvHeads: m.kvHeads });
      dk = p.dK;
      params = p.params.wQ + p.params.wK + p.params.wV + p.params.wO;
    } catch (err) {
      dk = err.message;
    }
    tr.innerHTML = `<th scope="row"></th><td></td><td></td><td></td><td class="dk"></td><td></td>`;
    const cells = tr.children;
    cells[0].textContent = m.name;
    cells[1].textContent = m.dModel.toLocaleString('en-US');
    cells[2].textContent = m.heads;
    cells[3].textContent = m.kvHeads === m.heads ? `${m.kvHeads} (MHA)` : `${m.kvHeads} (GQA)`;
    cells[4].textContent = dk;
    cells[5].textContent = typeof params === 'number' ? params.toLocaleString('en-US') : params;
  }
}

function fmtBytes(b) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0, v = b;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  let j = 0, w = b;
  const bi = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  while (w >= 1024 && j < bi.length - 1) { w /= 1024; j++; }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]} (${w.toFixed(w < 10 ? 2 : 1)} ${bi[j]})`;
}

function setupKV(mha) {
  const decoders = MODELS.filter((m) => m.layers);
  const sel = $('#kv-model'), kvSel = $('#kv-heads');
  decoders.forEach((m, i) => sel.add(new Option(`${m.name} (${m.layers} layers)`, String(i))));
  sel.value = String(decoders.findIndex((m) => m.name.startsWith('LLaMA')));
  const fillKV = () => {
    const m = decoders[Number(sel.value)];
    kvSel.replaceChildren();
    for (let g = 1; g <= m.heads; g++) {
      if (m.heads % g) continue;
      const label = g === m.heads ? `${g} (standard MHA)` : g === 1 ? '1 (multi-query)' : `${g} (grouped)`;
      kvSel.add(new Option(label, String(g)));
    }
    kvSel.value = String(m.kvHeads);
  };
  const update = () => {
    const m = decoders[Number(sel.value)];
    const g = Number(kvSel.value);
    const T = Math.max(1, Math.floor(Number($('#kv-len').value) || 1));
    const B = Math.max(1, Math.floor(Number($('#kv-batch').value) || 1));
    const bytes = Number($('#kv-dtype').value);
    const out = $('#kv-result');
    let p;
    try {
      p = mha.passport({ seqLen: T, dModel: m.dModel, numHeads: m.heads, kvHeads: g });
    } catch (err) {
      out.textContent = err.message;
      return;
    }
    const dk = p.dK;
    const total = 2 * m.layers * B * T * g * dk * bytes;
    const full = 2 * m.layers * B * T * m.heads * dk * bytes;
    out.replaceChildren();
    const f = document.createElement('div');
    tex(f, `2 \\times ${m.layers} \\times ${B} \\times ${T.toLocaleString('en-US').replace(/,/g, '{,}')} \\times ${g} \\times ${dk} \\times ${bytes}\\,\\text{B} = ${total.toLocaleString('en-US').replace(/,/g, '{,}')}\\,\\text{B}`);
    const s = document.createElement('p');
    s.innerHTML = `<strong id="kv-bytes" data-bytes="${total}">${fmtBytes(total)}</strong> of KV cache for ${m.name} · d<sub>k</sub> = ${dk} from the engine · `
      + (g === m.heads ? 'standard multi-head attention.' : `${m.heads / g}× smaller than with ${m.heads} K/V heads (${fmtBytes(full)}).`);
    out.append(f, s);
    const pp = $('#kv-passport');
    Object.assign(pp, { seqLen: T, dModel: m.dModel, heads: m.heads, kvHeads: g, noBias: m.bias === false });
  };
  sel.addEventListener('change', () => { fillKV(); update(); });
  for (const el of [kvSel, $('#kv-len'), $('#kv-batch'), $('#kv-dtype')]) el.addEventListener('input', update);
  $('#kv-form').addEventListener('submit', (e) => e.preventDefault());
  fillKV();
  update();
}

// ---------------------------------------------------------------------------------- self-check
const FEEDBACK = {
  dk: ['Right: 512 / 8 = 64.', 'Not quite. Divide d_model by the number of heads.'],
  ratio: ['Right: h · d · (d/h) = d², the single-head size.', 'Not quite. Each head has d × d/h entries; multiply by h.'],
  shape: ['Right: batch, heads, queries, keys.', 'Not quite. Each head has one T × T grid per sequence.'],
  wo: ['Right: W_O is the only place the heads are mixed.', 'Not quite. Concatenation only places columns side by side; look for the first sum over columns of several heads.'],
  gqa: ['Right: 64 / 8 = 8 times less K and V to store.', 'Not quite. The cache holds one K and one V per K/V head.'],
};

function setupQuiz() {
  const form = $('#quiz');
  form.addEventListener('submit', (e) => e.preventDefault());
  const sets = $$('fieldset.q', form);
  const evaluate = (write = true) => {
    let score = 0;
    for (const fs of sets) {
      const q = fs.dataset.q;
      const ans = fs.dataset.answer;
      const num = fs.querySelector('input[type=number]');
      const val = num ? num.value.trim() : (fs.querySelector('input:checked')?.value ?? '');
      state.answers[q] = val;
      const fb = fs.querySelector('.feedback');
      fs.classList.remove('right', 'wrong');
      if (val === '') { fb.textContent = ''; continue; }
      const ok = num ? Number(val) === Number(ans) : val === ans;
      if (ok) score++;
      fs.classList.add(ok ? 'right' : 'wrong');
      fb.textContent = FEEDBACK[q][ok ? 0 : 1];
    }
    $('#quiz-score').textContent = `${score} / ${sets.length}`;
    if (write) writeHash();
  };
  // restore answers from the URL
  for (const fs of sets) {
    const v = state.answers[fs.dataset.q];
    if (!v) continue;
    const num = fs.querySelector('input[type=number]');
    if (num) num.value = v;
    else { const r = fs.querySelector(`input[value="${CSS.escape(v)}"]`); if (r) r.checked = true; }
  }
  form.addEventListener('input', () => evaluate());
  form.addEventListener('change', () => evaluate());
  evaluate(false);
}

// ---------------------------------------------------------------------------------- start
async function main() {
  const engine = getEngine(); // start fetching and compiling the wasm before anything else
  parseHash();
  for (const el of $$('[data-tex]')) tex(el, el.dataset.tex, true);
  setupQuiz();
  const widget = $('#widget');
  if (state.h) widget.heads = state.h;
  widget.addEventListener('change', (e) => { if (e.target === widget) { state.h = e.detail.heads; writeHash(); } });
  updateProgress();
  watchSections();
  if (state.section) document.getElementById(state.section)?.scrollIntoView();

  const status = $('#engine-status');
  let mha;
  try {
    mha = await engine;
  } catch (err) {
    status.textContent = `The attention engine could not be loaded: ${err.message}`;
    status.classList.add('error');
    document.body.dataset.ready = 'error';
    return;
  }
  status.textContent = `Engine ready${mha.info ? ` · version ${mha.info.version} · build ${mha.info.tier}` +
    `${mha.info.tier === 'relaxed-simd' ? ' (SIMD with fused multiply-add)' : mha.info.simd ? ' (SIMD)' : ''}` : ''}.`;
  try {
    setupWorked(mha);
    setupModels(mha);
    setupKV(mha);
  } catch (err) {
    status.textContent = `Error while computing the lesson: ${err.message}`;
    status.classList.add('error');
    console.error(err);
    document.body.dataset.ready = 'error';
    return;
  }
  document.body.dataset.ready = 'true';
  // The page's engine, for the browser console and the soak test (wasm memory figures).
  window.mhaLesson = { engine: mha };
  // The trained models load after the rest of the page is ready (their files are fetched now).
  setupTrained(mha).catch((err) => {
    const about = $('#trained-about');
    about.textContent = `The trained models could not be loaded: ${err.message}`;
    about.classList.add('error');
    $('#trained').dataset.ready = 'error';
    console.error(err);
  }).finally(() => $('#trained').removeAttribute('aria-busy'));
}

main();
