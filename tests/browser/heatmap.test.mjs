// <mha-heatmap> on its own in Chromium: a large grid (96 × 96, like a trained model's map at its full
// context) is drawn on a canvas with a few hundred nodes, stays keyboard- and pointer-operable with the
// right numbers, offers its table of values on demand, passes axe and exports PNG; a 5 × 5 grid keeps
// a DOM node per cell. The colour scale (per map or shared, on the heatmap, <mha-heads> and
// <mha-widget>): heatmap-scale.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, axeSeriousViolations } from './helpers.mjs';
import { T, W, TOKENS, weights, openHeatmapPage } from '../helpers/heatmap-page.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const fmt3 = (v) => v.toFixed(3);
const openPage = (opts) => openHeatmapPage(env, opts);

const readout = (page) => page.evaluate(() => document.querySelector('#big').shadowRoot.querySelector('[part="readout"]').textContent.trim());
const focusedPlot = (page) => page.evaluate(() => {
  const big = document.querySelector('#big');
  return document.activeElement === big && big.shadowRoot.activeElement?.classList.contains('plot');
});

test('a 96 × 96 heatmap is drawn on a canvas: no node per cell, a few hundred nodes in all, the right colors', async () => {
  const { page, errors, context } = await openPage();
  const info = await page.evaluate(() => {
    const big = document.querySelector('#big');
    const root = big.shadowRoot;
    let nodes = 0;
    const walk = (n) => { nodes++; for (let c = n.firstChild; c; c = c.nextSibling) walk(c); };
    walk(root);
    const canvas = root.querySelector('canvas[part="canvas"]');
    return {
      mode: big.mode, cells: root.querySelectorAll('[part~="cell"], [role="gridcell"]').length,
      elements: root.querySelectorAll('*').length, nodes, tables: root.querySelectorAll('table').length,
      canvas: !!canvas, width: canvas?.width, cssWidth: canvas?.getBoundingClientRect().width,
      labels: root.querySelectorAll('[part="label"]').length,
      labelPx: parseFloat(getComputedStyle(root.querySelector('[part="label"]')).fontSize),
      value: big.valueAt(7, 11), matrix: big.matrix[7][11],
    };
  });
  assert.equal(info.mode, 'canvas');
  assert.equal(info.cells, 0, 'no [part=cell] or gridcell nodes');
  assert.ok(info.canvas, 'a canvas part');
  assert.equal(info.tables, 0, 'the table of values is not rendered until asked for');
  // row and column labels stay DOM text, 11 px or more: on 8 px cells (9 px with the gap) one label
  // spans as many cells as a line of it needs, so every step-th token is labelled
  assert.ok(info.labelPx >= 11, `labels of ${info.labelPx} px`);
  const step = Math.ceil((info.labelPx * 1.1) / 9);
  assert.ok(step > 1);
  assert.equal(info.labels, 2 * Math.ceil(T / step), 'one row and one column label every step-th token');
  assert.ok(info.elements < 500, `${info.elements} elements in the shadow root`);
  // --mha-cell-size 8px, 1px gaps: 96 · 9 - 1 CSS pixels; the bitmap has one pixel per cell
  assert.equal(info.cssWidth, T * 9 - 1);
  assert.equal(info.width, T);
  assert.equal(info.value, W[7][11]);
  assert.equal(info.matrix, W[7][11]);
  // The canvas holds the same color as a DOM cell of the same value on the same scale.
  const pairs = [[0, 0], [7, 11], [50, 95], [95, 3]];
  const same = await page.evaluate(async (pairs) => {
    const big = document.querySelector('#big');
    const m = big.matrix;
    const probe = document.createElement('mha-heatmap');
    const hi = Math.max(...m.flat());
    probe.domain = [0, hi];
    probe.weights = [pairs.map(([r, c]) => m[r][c])];
    document.body.append(probe);
    await probe.updateComplete;
    const g = big.shadowRoot.querySelector('canvas[part="canvas"]').getContext('2d');
    const out = pairs.map(([r, c], i) => {
      const css = getComputedStyle(probe.shadowRoot.querySelector(`[data-r="0"][data-c="${i}"]`)).backgroundColor;
      const [pr, pg, pb, pa] = g.getImageData(c, r, 1, 1).data;
      return { css, px: `rgb(${pr}, ${pg}, ${pb})`, pa };
    });
    probe.remove();
    return out;
  }, pairs);
  for (const s of same) {
    assert.equal(s.px, s.css);
    assert.equal(s.pa, 255);
  }
  // On screen (CSS scaling and the mask of the gaps): a cell's center has its color, the 1px gap
  // between two cells shows the page's white background.
  const box = await page.evaluate(() => {
    const r = document.querySelector('#big').shadowRoot.querySelector('.plot').getBoundingClientRect();
    return { x: r.left, y: r.top };
  });
  const shot = await page.screenshot({ clip: { x: box.x, y: box.y, width: 200, height: 120 } });
  const onScreen = await page.evaluate(async ({ b64, pairs }) => {
    const bmp = await createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
    const c = new OffscreenCanvas(bmp.width, bmp.height);
    const g = c.getContext('2d');
    g.drawImage(bmp, 0, 0);
    const at = (x, y) => { const [r, gr, b] = g.getImageData(x, y, 1, 1).data; return `rgb(${r}, ${gr}, ${b})`; };
    const src = document.querySelector('#big').shadowRoot.querySelector('canvas[part="canvas"]').getContext('2d');
    const want = (r, c) => { const [a, b, d] = src.getImageData(c, r, 1, 1).data; return `rgb(${a}, ${b}, ${d})`; };
    return pairs.filter(([r, c]) => r < 12 && c < 20).map(([r, c]) => ({
      center: at(c * 9 + 4, r * 9 + 4), want: want(r, c), gapRight: at(c * 9 + 8, r * 9 + 4), gapBelow: at(c * 9 + 4, r * 9 + 8),
    }));
  }, { b64: shot.toString('base64'), pairs });
  assert.equal(onScreen.length, 2);
  for (const s of onScreen) {
    assert.equal(s.center, s.want);
    assert.equal(s.gapRight, 'rgb(255, 255, 255)');
    assert.equal(s.gapBelow, 'rgb(255, 255, 255)');
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('keyboard: the plot takes focus, the keys move the active cell, the readout and events give its value', async () => {
  const { page, errors, context } = await openPage();
  await page.evaluate(() => {
    window.__events = [];
    const big = document.querySelector('#big');
    big.addEventListener('mha-cell-focus', (e) => window.__events.push(e.detail));
    // keys only: the pointer, wherever the page's scroll puts the plot under it, must not hover a cell
    big.style.pointerEvents = 'none';
  });
  await page.keyboard.press('Tab');
  assert.ok(await focusedPlot(page), 'Tab reaches the canvas plot');
  const plot = await page.evaluate(() => {
    const p = document.querySelector('#big').shadowRoot.querySelector('.plot');
    return { role: p.getAttribute('role'), tabindex: p.getAttribute('tabindex'), label: p.getAttribute('aria-label'), describedby: p.getAttribute('aria-describedby') };
  });
  assert.equal(plot.tabindex, '0');
  assert.equal(plot.role, 'application');
  assert.match(plot.label, /^Layer 1, head 2: 96 queries by 96 keys; active cell a to a: /);
  assert.match(plot.describedby, /readout/);
  assert.equal(await readout(page), `a \u2192 a: ${fmt3(W[0][0])}`);

  const expectAt = async (r, c, why) => {
    // the readout is drawn on the render after the key (the canvas maps take turns): wait for it, then compare
    const want = `${TOKENS[r]} \u2192 ${TOKENS[c]}: ${fmt3(W[r][c])}`;
    await page.waitForFunction((w) => document.querySelector('#big').shadowRoot.querySelector('[part="readout"]').textContent.trim() === w, want, { timeout: 5_000 }).catch(() => {});
    assert.equal(await readout(page), want, why);
    const last = await page.evaluate(() => window.__events.at(-1));
    assert.deepEqual(last, { row: r, col: c, query: TOKENS[r], key: TOKENS[c], value: W[r][c] }, why);
  };
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  for (let i = 0; i < 2; i++) await page.keyboard.press('ArrowDown');
  await expectAt(2, 3, 'arrows');
  for (const [key, r, c, why] of [['End', 2, 95, 'End'], ['PageDown', 95, 95, 'PageDown'], ['ArrowDown', 95, 95, 'stays inside the grid'],
    ['Home', 95, 0, 'Home'], ['PageUp', 0, 0, 'PageUp'], ['Control+End', 95, 95, 'Ctrl+End'], ['Control+Home', 0, 0, 'Ctrl+Home'],
    ['ArrowRight', 0, 1, 'ArrowRight']]) {
    await page.keyboard.press(key);
    await expectAt(r, c, why);
  }
  const label = await page.evaluate(() => document.querySelector('#big').shadowRoot.querySelector('.plot').getAttribute('aria-label'));
  assert.ok(label.endsWith(`active cell a to b: ${fmt3(W[0][1])}`), label);

  // the active cell's focus outline is drawn on the overlay, around cell (0, 1)
  const ring = await page.evaluate(() => {
    const o = document.querySelector('#big').shadowRoot.querySelector('canvas.overlay').getContext('2d');
    // the overlay extends 4px beyond the plot; cell (0, 1) spans x 9..17, y 0..8 of the plot
    const at = (x, y) => o.getImageData(x + 4, y + 4, 1, 1).data[3];
    return { edge: at(8, 4), inside: at(13, 4), far: at(60, 60) };
  });
  assert.ok(ring.edge > 0, 'outline at the cell edge');
  assert.equal(ring.inside, 0, 'the cell itself stays visible');
  assert.equal(ring.far, 0);

  // a new matrix keeps the active cell and its readout in step
  const W2 = weights(T, 2);
  await page.evaluate(async (w) => { const b = document.querySelector('#big'); b.weights = w; await b.updateComplete; }, W2);
  assert.equal(await readout(page), `a \u2192 b: ${fmt3(W2[0][1])}`);

  // Tab leaves the plot (one tab stop), to the disclosure of the table
  await page.keyboard.press('Tab');
  const next = await page.evaluate(() => document.querySelector('#big').shadowRoot.activeElement?.tagName);
  assert.notEqual(next, 'DIV');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the pointer shows the value of the cell under it, and highlightRow is drawn', async () => {
  const { page, errors, context } = await openPage({ viewport: { width: 1280, height: 1400 } });
  await page.evaluate(() => {
    window.__rows = [];
    window.__events = [];
    const b = document.querySelector('#big');
    b.addEventListener('mha-row-hover', (e) => window.__rows.push(e.detail.row));
    b.addEventListener('mha-cell-focus', (e) => window.__events.push(e.detail));
  });
  const box = await page.evaluate(() => {
    const r = document.querySelector('#big').shadowRoot.querySelector('.plot').getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
  for (const [r, c] of [[10, 20], [95, 0], [0, 95], [48, 48]]) {
    await page.mouse.move(box.x + c * 9 + 4.5, box.y + r * 9 + 4.5);
    assert.equal(await readout(page), `${TOKENS[r]} \u2192 ${TOKENS[c]}: ${fmt3(W[r][c])}`);
    assert.equal((await page.evaluate(() => window.__events.at(-1))).value, W[r][c]);
  }
  await page.mouse.move(box.x - 200, box.y - 100);
  const rows = await page.evaluate(() => window.__rows);
  assert.deepEqual(rows, [10, 95, 0, 48, -1]);
  // a click makes the cell under the pointer the active one
  await page.mouse.click(box.x + 5 * 9 + 2, box.y + 6 * 9 + 2);
  assert.ok(await focusedPlot(page));
  await page.keyboard.press('ArrowRight');
  assert.equal(await readout(page), `${TOKENS[6]} \u2192 ${TOKENS[6]}: ${fmt3(W[6][6])}`);

  const hl = await page.evaluate(async () => {
    const b = document.querySelector('#big');
    b.blur();
    document.activeElement?.blur?.();
    b.highlightRow = 30;
    await b.updateComplete;
    const o = b.shadowRoot.querySelector('canvas.overlay').getContext('2d');
    const at = (x, y) => o.getImageData(x + 4, y + 4, 1, 1).data[3];
    const label = [...b.shadowRoot.querySelectorAll('.rl.hl')].map((e) => e.textContent);
    const out = { top: at(400, 30 * 9), inside: at(400, 30 * 9 + 4), other: at(400, 20 * 9) , label };
    b.highlightRow = -1;
    await b.updateComplete;
    out.cleared = at(400, 30 * 9);
    return out;
  });
  assert.ok(hl.top > 0, 'the highlighted row has an outline');
  assert.equal(hl.inside, 0);
  assert.equal(hl.other, 0);
  assert.deepEqual(hl.label, [TOKENS[30]]);
  assert.equal(hl.cleared, 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the table of values is rendered only while open, with every number', async () => {
  const { page, errors, context } = await openPage();
  const big = page.locator('#big');
  assert.equal(await big.locator('table').count(), 0);
  await big.locator('summary').click();
  await page.waitForFunction(() => document.querySelector('#big').shadowRoot.querySelector('table'));
  const t = await page.evaluate(() => {
    const table = document.querySelector('#big').shadowRoot.querySelector('table');
    const rows = [...table.tBodies[0].rows];
    return {
      caption: table.caption.textContent,
      head: [...table.tHead.rows[0].cells].map((c) => c.textContent),
      rowHeads: rows.map((r) => r.cells[0].textContent),
      values: rows.map((r) => [...r.cells].slice(1).map((c) => c.textContent)),
    };
  });
  assert.match(t.caption, /Layer 1, head 2/);
  assert.deepEqual(t.head, ['query', ...TOKENS]);
  assert.deepEqual(t.rowHeads, TOKENS);
  assert.deepEqual(t.values, W.map((row) => row.map(fmt3)));
  // it follows new weights while open, and goes away when closed
  const W3 = weights(T, 3);
  await page.evaluate(async (w) => { const b = document.querySelector('#big'); b.weights = w; await b.updateComplete; }, W3);
  const cell = await page.evaluate(() => document.querySelector('#big').shadowRoot.querySelector('tbody tr:nth-child(5) td:nth-child(8)').textContent);
  assert.equal(cell, fmt3(W3[4][6]));
  await big.locator('summary').click();
  await page.waitForFunction(() => !document.querySelector('#big').shadowRoot.querySelector('table'));
  assert.deepEqual(errors, []);
  await context.close();
});

test('axe finds no serious or critical violation, closed and with the table open', async () => {
  const { page, errors, context } = await openPage();
  let v = await axeSeriousViolations(page, '#host');
  assert.deepEqual(v, [], JSON.stringify(v, null, 1));
  await page.locator('#big summary').click();
  await page.waitForFunction(() => document.querySelector('#big').shadowRoot.querySelector('table'));
  v = await axeSeriousViolations(page, '#host');
  assert.deepEqual(v, [], JSON.stringify(v, null, 1));
  assert.deepEqual(errors, []);
  await context.close();
});

test('toPNG and toSVG still export the whole picture of a canvas heatmap', async () => {
  const { page, errors, context } = await openPage();
  const r = await page.evaluate(async () => {
    const b = document.querySelector('#big');
    const blob = await b.toPNG({ scale: 1 });
    const bmp = await createImageBitmap(blob);
    const svg = b.toSVG();
    return { type: blob.type, size: blob.size, w: bmp.width, h: bmp.height, rects: (svg.match(/<g class="cell">/g) ?? []).length };
  });
  assert.equal(r.type, 'image/png');
  assert.ok(r.size > 1000);
  assert.ok(r.w > 96 * 40 && r.h > 96 * 40, `${r.w} × ${r.h}`);
  assert.equal(r.rects, T * T);
  assert.deepEqual(errors, []);
  await context.close();
});

test('show-values draws the numbers on a device-resolution canvas', async () => {
  const { page, errors, context } = await openPage();
  const r = await page.evaluate(async () => {
    const b = document.querySelector('#big');
    b.style.setProperty('--mha-cell-size', '30px');
    b.showValues = true;
    await b.updateComplete;
    const canvas = b.shadowRoot.querySelector('canvas[part="canvas"]');
    const g = canvas.getContext('2d');
    // cell (0, 0) spans 0..30: its center has text pixels of another color than its corner
    const px = (x, y) => Array.from(g.getImageData(x, y, 1, 1).data).join();
    const colors = new Set();
    for (let x = 8; x < 22; x++) colors.add(px(x, 15));
    return { cls: canvas.className, width: canvas.width, css: canvas.getBoundingClientRect().width, colors: colors.size, gap: g.getImageData(30, 5, 1, 1).data[3] };
  });
  assert.equal(r.cls, 'hires');
  assert.equal(r.css, 96 * 31 - 1);
  assert.equal(r.width, 96 * 31 - 1);
  assert.ok(r.colors > 1, 'text drawn in the cell');
  assert.equal(r.gap, 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a 5 × 5 heatmap keeps a DOM node per cell (grid, roving focus, data-value)', async () => {
  const { page, errors, context } = await openPage();
  const s = await page.evaluate(() => {
    const small = document.querySelector('#small');
    const root = small.shadowRoot;
    const cells = [...root.querySelectorAll('[role="gridcell"]')];
    return {
      mode: small.mode, cells: cells.length, parts: root.querySelectorAll('[part="cell"]').length,
      canvas: root.querySelectorAll('canvas').length, grid: root.querySelector('[role="grid"]') !== null,
      value: Number(cells[7].dataset.value), r: cells[7].dataset.r, c: cells[7].dataset.c,
    };
  });
  assert.deepEqual(s, { mode: 'dom', cells: 25, parts: 25, canvas: 0, grid: true, value: W[1][2], r: '1', c: '2' });
  // 16 × 16 = 256 cells is still DOM; 17 × 16 is canvas
  const modes = await page.evaluate(async () => {
    const h = document.createElement('mha-heatmap');
    document.body.append(h);
    const sq = (r, c) => Array.from({ length: r }, () => Array(c).fill(1 / c));
    h.weights = sq(16, 16);
    await h.updateComplete;
    const a = [h.mode, h.shadowRoot.querySelectorAll('[role="gridcell"]').length];
    h.weights = sq(17, 16);
    await h.updateComplete;
    const b = [h.mode, h.shadowRoot.querySelectorAll('[role="gridcell"]').length, h.shadowRoot.querySelectorAll('canvas').length];
    h.weights = sq(3, 3);
    await h.updateComplete;
    const c = [h.mode, h.shadowRoot.querySelectorAll('[role="gridcell"]').length, h.shadowRoot.querySelectorAll('canvas').length];
    h.remove();
    return [a, b, c];
  });
  assert.deepEqual(modes, [['dom', 256], ['canvas', 0, 2], ['dom', 9, 0]]);
  assert.deepEqual(errors, []);
  await context.close();
});

/** Legend ends and the scale note of every map in a root (a heatmap's shadow root, or <mha-heads>'). */

test('a DOM-mode map on small cells: labels of 11 px or more whatever the page sets, one every step-th token, every row and column still with its header', async () => {
  const { page, errors, context } = await openPage();
  const n = 14;   // 196 cells: the DOM rendering
  const measure = () => page.evaluate(() => {
    const el = document.querySelector('#tiny');
    const root = el.shadowRoot;
    const shown = [...root.querySelectorAll('[part="label"]')].filter((l) => getComputedStyle(l).position !== 'absolute');
    const cells = [...root.querySelectorAll('[role="gridcell"][data-c="0"]')].map((c) => c.getBoundingClientRect().top);
    return {
      mode: el.mode, shown: shown.length, px: Math.min(...shown.map((l) => parseFloat(getComputedStyle(l).fontSize))),
      rowheaders: [...root.querySelectorAll('[role="rowheader"]')].map((h) => h.textContent),
      columnheaders: root.querySelectorAll('[role="columnheader"]').length,
      rowPitch: [...new Set(cells.slice(1).map((t, i) => Math.round((t - cells[i]) * 10) / 10))],
    };
  });
  await page.evaluate(({ w, tokens }) => {
    const style = document.createElement('style');
    style.textContent = '#tiny { --mha-cell-size: 8px; } #tiny::part(label) { font-size: 7px; }';
    document.head.append(style);
    const el = document.createElement('mha-heatmap');
    el.id = 'tiny';
    el.label = 'small cells';
    el.tokens = tokens;
    el.weights = w;
    document.querySelector('#host').append(el);
  }, { w: weights(n, 3), tokens: TOKENS.slice(0, n) });
  await page.waitForFunction(() => document.querySelector('#tiny')?.shadowRoot?.querySelector('.rl.spaced'));
  const small = await measure();
  assert.equal(small.mode, 'dom');
  assert.ok(small.px >= 11, `labels of ${small.px} px`);
  const step = Math.ceil((small.px * 1.1) / 9);
  assert.ok(step > 1);
  assert.equal(small.shown, 2 * Math.ceil(n / step), 'one row and one column label every step-th token');
  assert.deepEqual(small.rowheaders, TOKENS.slice(0, n), 'a header for every row, for screen readers');
  assert.equal(small.columnheaders, n + 1, 'a header for every column and the corner');
  assert.deepEqual(small.rowPitch, [9], 'rows stay one cell and a gap apart');
  // on cells of a line of text or more, every token is labelled again
  await page.evaluate(() => { document.querySelector('#tiny').style.setProperty('--mha-cell-size', '20px'); });
  await page.waitForFunction(() => !document.querySelector('#tiny').shadowRoot.querySelector('.rl.spaced'));
  const large = await measure();
  assert.equal(large.shown, 2 * n);
  assert.deepEqual(large.rowPitch, [21]);
  assert.deepEqual(errors, []);
  await context.close();
});
