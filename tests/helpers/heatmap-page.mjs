// Shared setup of the <mha-heatmap> browser suites (tests/browser/heatmap*.test.mjs): a page with
// the component bundle, a seeded row-stochastic 96 × 96 matrix and its tokens, and a page opener that
// puts a large heatmap (#big, those weights) and a 5 × 5 one (#small, their top-left corner) on it.

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>heatmap test</title>
<style>body { font-family: system-ui, sans-serif; margin: 16px; } #big { --mha-cell-size: 8px; }</style></head>
<body><main><h1>Heatmaps</h1><div id="host"></div></main>
<script type="module">
  import '/dist/mha-components.js';
  await customElements.whenDefined('mha-heatmap');
  window.__ready = true;
</script></body></html>`;

/** A row-stochastic T × T matrix from a fixed seed (softmax of pseudo-random logits). */
export function weights(T, seed = 1) {
  let s = seed >>> 0;
  const rand = () => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32);
  return Array.from({ length: T }, () => {
    const e = Array.from({ length: T }, () => Math.exp(4 * rand()));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((v) => Math.fround(v / z));
  });
}
export const T = 96;
export const W = weights(T);
export const TOKENS = Array.from({ length: T }, (_, i) => 'abcdefghijklmnopqrstuvwxyz'[i % 26] + (i >= 26 ? String(i) : ''));

/**
 * Opens the test page in `env` (tests/browser/helpers.mjs setup()) with #big (96 × 96, `compact`)
 * and #small (5 × 5) rendered. Returns {page, errors, context}.
 */
export async function openHeatmapPage(env, { compact = true, viewport } = {}) {
  const { page, errors, context } = await env.newPage(viewport ? { viewport } : {});
  await page.route('**/heatmap-test.html', (r) => r.fulfill({ contentType: 'text/html; charset=utf-8', body: PAGE }));
  await page.goto(`${env.url}heatmap-test.html`);
  await page.waitForFunction(() => window.__ready === true);
  await page.evaluate(({ w, tokens, compact }) => {
    const big = document.createElement('mha-heatmap');
    big.id = 'big';
    big.label = 'Layer 1, head 2';
    big.compact = compact;
    big.tokens = tokens;
    big.weights = w;
    const small = document.createElement('mha-heatmap');
    small.id = 'small';
    small.label = 'small head';
    small.tokens = ['the', 'cat', 'sat', 'on', 'mat'];
    small.weights = w.slice(0, 5).map((row) => row.slice(0, 5));
    document.querySelector('#host').append(big, small);
  }, { w: W, tokens: TOKENS, compact });
  await page.evaluate(async () => {
    for (const id of ['big', 'small']) await document.getElementById(id).updateComplete;
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  });
  return { page, errors, context };
}

