// The pure logic of <mha-model-view> (web/lib/components/logic/model-view.js): the thumbnail's pooling
// against a reference written from block bounds, what each thumbnail says on hand-made attention whose
// scores are known, the accessible name, and the grid's keyboard moves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { poolMax, thumbSide, headSummaries, scoreEntries, cellName, gridMove, headLabel, THUMB_PIXELS, PAGE_ROWS } from '../web/lib/components/logic/model-view.js';
import { scoreText, TYPE_THRESHOLD } from '../web/lib/src/index.js';
import { mulberry32 } from '../web/lib/src/engine/weights.js';

/** The reference: bin r covers rows ceil(r·T/S) … ceil((r+1)·T/S) − 1, the largest value of the block. */
function poolRef(m, T, S) {
  const lo = (r) => Math.ceil((r * T) / S);
  const out = [];
  for (let r = 0; r < S; r++) {
    for (let c = 0; c < S; c++) {
      let best = -Infinity;
      for (let y = lo(r); y < lo(r + 1); y++) for (let x = lo(c); x < lo(c + 1); x++) best = Math.max(best, m[y * T + x]);
      out.push(best);
    }
  }
  return out;
}

test('thumbSide: the token count up to THUMB_PIXELS, then THUMB_PIXELS', () => {
  assert.equal(THUMB_PIXELS, 64);
  assert.deepEqual([1, 7, 64, 65, 128, 1024].map((T) => thumbSide(T)), [1, 7, 64, 64, 64, 64]);
});

test('poolMax: the largest weight of each block, equal to the block-bound reference for every T and S, and the map itself when S = T', () => {
  // by hand: a 4 × 4 map pooled to 2 × 2
  const m = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.05, 0.0, 0.15, 0.25, 0.35, 0.45, 0.55];
  assert.deepEqual(Array.from(poolMax(m, 0, 4, 2)).map((v) => +v.toFixed(6)), [0.6, 0.8, 0.9, 0.55]);
  const rand = mulberry32(5);
  for (const [T, S] of [[5, 3], [7, 7], [128, 64], [100, 64], [65, 64], [3, 1]]) {
    const h = 2;
    const data = Float32Array.from({ length: h * T * T }, () => rand());
    for (let j = 0; j < h; j++) {
      const head = Array.from(data.subarray(j * T * T, (j + 1) * T * T));
      assert.deepEqual(Array.from(poolMax(data, j * T * T, T, S)), poolRef(head, T, S).map(Math.fround), `T=${T} S=${S} head ${j}`);
      if (S === T) assert.deepEqual(Array.from(poolMax(data, j * T * T, T, S)), Array.from(data.subarray(j * T * T, (j + 1) * T * T)));
    }
  }
});

test('poolMax keeps a previous-token diagonal at full brightness (a mean would halve it)', () => {
  const T = 128, S = 64;
  const m = new Float32Array(T * T);
  m[0] = 1;
  for (let t = 1; t < T; t++) m[t * T + t - 1] = 1;
  const p = poolMax(m, 0, T, S);
  for (let r = 0; r < S; r++) assert.equal(p[r * S + r], 1, `bin (${r}, ${r})`);
  assert.equal(p[0 * S + 5], 0);
});

/** One layer of causal attention [h, T, T] where head 0 is previous-token and head 1 first-token (head 1 of a second layer: self). */
function handMade(T) {
  const a = new Float32Array(2 * T * T);
  const b = new Float32Array(2 * T * T);
  for (let t = 0; t < T; t++) {
    a[t * T + Math.max(0, t - 1)] = 1;
    a[T * T + t * T] = 1;
    b[t * T + t] = 1;
    b[T * T + t * T + Math.max(0, t - 1)] = 0.5;
    b[T * T + t * T + t] += 0.5;
  }
  return [{ data: a, shape: [2, T, T] }, { data: b, shape: [2, T, T] }];
}

test('headSummaries: previous-token and induction scores from scoreText, types from the text without probes', () => {
  const T = 6;
  const att = handMade(T);
  const ids = [1, 2, 3, 4, 5, 6];   // no repeated span: no induction score
  const s = headSummaries({ numLayers: 2, numHeads: 2 }, scoreText(att, ids));
  assert.deepEqual(s.map((x) => [x.layer, x.head, x.previous, x.induction, x.copying, x.type, x.from]), [
    [0, 0, 1, null, null, 'previous-token', 'text'],
    [0, 1, 0.2, null, null, 'first-token', 'text'],   // at t = 1 the first token is the previous one
    [1, 0, 0, null, null, 'current-token', 'text'],
    [1, 1, 0.5, null, null, 'previous-token', 'text'],
  ]);
  // no scores (no run yet): nothing known
  assert.deepEqual(headSummaries({ numLayers: 1, numHeads: 1 }, null)[0], { layer: 0, head: 0, previous: null, induction: null, copying: null, copies: null, type: null, from: null });
});

test('headSummaries: the probes\' label and the copying score where the model has them', () => {
  const att = handMade(4);
  const reference = [0, 1].flatMap((l) => [0, 1].map((j) => ({ layer: l, head: j, type: l === 1 && j === 1 ? 'induction' : 'mixed' })));
  const copying = reference.map(({ layer, head }) => ({ layer, head, score: layer === 1 && head === 1 ? 0.75 : 0.25, copies: layer === 1 && head === 1 }));
  const s = headSummaries({ numLayers: 2, numHeads: 2 }, scoreText(att, [1, 2, 1, 2]), reference, copying);
  assert.deepEqual(s[3], { layer: 1, head: 1, previous: 0.5, induction: s[3].induction, copying: 0.75, copies: true, type: 'induction', from: 'probes' });
  assert.equal(s[0].type, 'mixed');
  assert.equal(s[0].copying, 0.25);
});

test('scoreEntries: short values, strong at the threshold, copying only where there is one', () => {
  assert.deepEqual(scoreEntries({ previous: 0.816, induction: null, copying: null, copies: null }, TYPE_THRESHOLD),
    [{ key: 'previous', abbr: 'p', text: '.82', strong: true }, { key: 'induction', abbr: 'i', text: '—', strong: false }]);
  assert.deepEqual(scoreEntries({ previous: 0.399, induction: 0.4, copying: 0.998, copies: true }, TYPE_THRESHOLD).map((e) => [e.text, e.strong]),
    [['.40', false], ['.40', true], ['1.0', true]]);
});

test('cellName and headLabel: where, what and the scores in words', () => {
  assert.equal(headLabel(2, 4), 'L3·H5');
  assert.equal(cellName({ layer: 0, head: 2, previous: 0.051, induction: 0.814, copying: 0.62, copies: true, type: 'induction', from: 'probes' }),
    'Layer 1, head 3: induction head (probes). On this text: previous-token 0.05, induction 0.81. Copying 0.62.');
  assert.equal(cellName({ layer: 11, head: 0, previous: 0.2, induction: null, copying: null, copies: null, type: 'broad', from: 'text' }, true),
    'Layer 12, head 1: broad (on this text), switched off. On this text: previous-token 0.20, induction no repeated span.');
});

test('gridMove: arrows stop at the edges, Home/End within the row, Ctrl+Home/End the corners, PageUp/PageDown by PAGE_ROWS', () => {
  const k = (key, ctrlKey = false) => ({ key, ctrlKey });
  const R = 12, C = 12;
  assert.deepEqual(gridMove([0, 0], k('ArrowRight'), R, C), [0, 1]);
  assert.deepEqual(gridMove([0, 11], k('ArrowRight'), R, C), [0, 11]);
  assert.deepEqual(gridMove([0, 0], k('ArrowLeft'), R, C), [0, 0]);
  assert.deepEqual(gridMove([0, 3], k('ArrowDown'), R, C), [1, 3]);
  assert.deepEqual(gridMove([11, 3], k('ArrowDown'), R, C), [11, 3]);
  assert.deepEqual(gridMove([0, 3], k('ArrowUp'), R, C), [0, 3]);
  assert.deepEqual(gridMove([5, 7], k('Home'), R, C), [5, 0]);
  assert.deepEqual(gridMove([5, 7], k('End'), R, C), [5, 11]);
  assert.deepEqual(gridMove([5, 7], k('Home', true), R, C), [0, 0]);
  assert.deepEqual(gridMove([5, 7], k('End', true), R, C), [11, 11]);
  assert.deepEqual(gridMove([5, 7], { key: 'End', metaKey: true }, R, C), [11, 11]);
  assert.equal(PAGE_ROWS, 4);
  assert.deepEqual(gridMove([5, 7], k('PageDown'), R, C), [9, 7]);
  assert.deepEqual(gridMove([9, 7], k('PageDown'), R, C), [11, 7]);
  assert.deepEqual(gridMove([2, 7], k('PageUp'), R, C), [0, 7]);
  assert.equal(gridMove([2, 7], k('a'), R, C), null);
  assert.equal(gridMove([2, 7], k('Enter'), R, C), null);
  // a grid of one column (filtered to one head)
  assert.deepEqual(gridMove([4, 0], k('ArrowRight'), 12, 1), [4, 0]);
});
