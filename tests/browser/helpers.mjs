// Shared set-up of the browser tests: build the site's bundles (web/site/) if needed, start the static server in-process
// on a free port, and launch Debian's Chromium through playwright-core (no browser download).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { startServer, EXAMPLES_CSP } from '../../scripts/serve.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'];

export function ensureBuilt() {
  const wasm = path.join(ROOT, 'web', 'lib', 'wasm', 'mha_core.wasm');
  if (!existsSync(wasm)) throw new Error(`missing ${wasm}: run npm run build first`);
  const outputs = ['web/lib/dist/mha-components.js', 'web/lib/dist/mha-trained.js', 'web/site/dist/lesson.js', 'web/site/dist/mha-components.js', 'web/site/dist/mha-trained.js',
    'web/site/wasm/mha_core.wasm', 'web/site/models/index.json'].map((f) => path.join(ROOT, f));
  // the bundles embed the JS API and the Emscripten glue: rebuild when any input is newer
  const newest = Math.max(...['web/lib/wasm', 'web/lib/src', 'web/lib/components', 'web/lib/models', 'web/site/lesson'].flatMap((d) => {
    const dir = path.join(ROOT, d);
    return existsSync(dir) ? readdirSync(dir).map((f) => statSync(path.join(dir, f)).mtimeMs) : [];
  }));
  if (outputs.some((f) => !existsSync(f) || statSync(f).mtimeMs < newest)) {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-web.mjs')], { stdio: 'inherit' });
  }
  mkdirSync(ARTIFACTS, { recursive: true });
}

/** Playwright's waitForFunction can evaluate its predicate again in a later task, where a page's CSP
 * refuses the eval (Chromium words it "Refused to evaluate …" or "Evaluating … violates …"): the
 * refusal names no script of the page (the protocol's script has no URL). */
const harnessEval = (text, where) => /(Refused to evaluate|Evaluating) a string as JavaScript/.test(text) && !/https?:\/\//.test(where);

/**
 * Pushes the page's console errors and uncaught exceptions onto `errors` (prefixed by kind), leaving
 * out the test harness's own refused evals.
 * @param {object} page a playwright page
 * @param {string[]} errors
 * @param {{console?: string, pageerror?: string}} [prefix]
 */
export function recordErrors(page, errors, prefix = {}) {
  page.on('console', (m) => {
    if (m.type() === 'error' && !harnessEval(m.text(), m.location()?.url ?? '')) errors.push(`${prefix.console ?? ''}${m.text()}`);
  });
  page.on('pageerror', (e) => {
    if (!harnessEval(e.message, e.stack ?? '')) errors.push(`${prefix.pageerror ?? ''}${e.message}`);
  });
}

/** Start server + browser; returns {server, browser, url, newPage, close}. */
export async function setup() {
  ensureBuilt();
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (scripts/setup.sh installs it)`);
  const server = await startServer({ port: 0, root: path.join(ROOT, 'web', 'site') });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const pages = [];
  return {
    server,
    browser,
    url: server.url,
    /** A new page that records console errors, page errors, failed requests and CSP violations. */
    async newPage({ colorScheme = 'light', viewport = { width: 1280, height: 900 } } = {}) {
      const context = await browser.newContext({ colorScheme, viewport, reducedMotion: 'reduce' });
      const page = await context.newPage();
      const errors = [];
      recordErrors(page, errors, { console: 'console: ', pageerror: 'pageerror: ' });
      // a request the next page.goto cut short fails with net::ERR_ABORTED (a test that walks several
      // URLs in one page leaves the previous one's wasm download in flight): not the page's error
      page.on('requestfailed', (r) => {
        if (r.failure()?.errorText !== 'net::ERR_ABORTED') errors.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`);
      });
      page.on('response', (r) => { if (r.status() >= 400) errors.push(`http ${r.status()}: ${r.url()}`); });
      await page.addInitScript(() => {
        window.__csp = [];
        document.addEventListener('securitypolicyviolation', (e) => {
          // the harness's refused evals (see harnessEval) have no source file; the page's own name their script
          if (e.blockedURI === 'eval' && e.sourceFile === '') return;
          window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}`.trim());
        });
      });
      pages.push(context);
      return { page, errors, context };
    },
    async close() {
      for (const c of pages) await c.close().catch(() => {});
      await browser.close();
      await server.close();
    },
  };
}

/** The innermost focused element across shadow roots, described for assertions. */
export async function deepFocus(page) {
  return page.evaluate(() => {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (!el) return null;
    return {
      tag: el.tagName.toLowerCase(), role: el.getAttribute('role'), text: el.textContent.trim(),
      label: el.getAttribute('aria-label'), r: el.dataset?.r, c: el.dataset?.c, h: el.dataset?.h,
    };
  });
}

/** Plain-JS reference of multi-head self-attention weights, packed [in, out] weights, no bias. */
export function referenceWeights(X, wQ, wK, wV, h) {
  const T = X.length, d = X[0].length, dk = d / h;
  const mm = (A, W) => A.map((row) => W[0].map((_, j) => row.reduce((s, x, i) => s + x * W[i][j], 0)));
  const Q = mm(X, wQ), K = mm(X, wK);
  void wV;
  const heads = [];
  for (let i = 0; i < h; i++) {
    const rows = [];
    for (let r = 0; r < T; r++) {
      const s = [];
      for (let c = 0; c < T; c++) {
        let acc = 0;
        for (let j = i * dk; j < (i + 1) * dk; j++) acc += Q[r][j] * K[c][j];
        s.push(acc / Math.sqrt(dk));
      }
      const m = Math.max(...s);
      const e = s.map((v) => Math.exp(v - m));
      const z = e.reduce((a, b) => a + b, 0);
      rows.push(e.map((v) => v / z));
    }
    heads.push(rows);
  }
  return heads;
}

/**
 * The serious and critical axe-core violations on the page (within `selector`, default the whole
 * document), each as {id, impact, nodes: the first three targets}.
 */
export async function axeSeriousViolations(page, selector = null) {
  await page.addScriptTag({ content: readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
  const violations = await page.evaluate(async (sel) => {
    const r = await window.axe.run(sel ? document.querySelector(sel) : document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  }, selector);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * An element's example page at 390 px wide, in the light and the dark scheme: no horizontal page
 * overflow, no serious or critical axe-core violation, no console error; screenshots
 * tests/artifacts/element-<tag>-390-<scheme>.png. axe is injected as an inline script, so these
 * contexts bypass the page's CSP (the element's own tests check the page under it).
 * @param {{browser: object, url: string}} env from setup()
 * @param {{page: string, tag: string, ready: (page: object) => Promise<void>}} o the page's path
 *   under the site, the element's tag, and a wait until it has drawn
 */
export async function checkNarrowPage(env, { page: pagePath, tag, ready }) {
  for (const colorScheme of ['light', 'dark']) {
    const context = await env.browser.newContext({ bypassCSP: true, colorScheme, viewport: { width: 390, height: 800 } });
    const page = await context.newPage();
    const errors = [];
    recordErrors(page, errors);
    await page.goto(`${env.url}${pagePath}`);
    await ready(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${colorScheme}: page overflows 390 px by ${overflow} px`);
    await page.screenshot({ path: path.join(ARTIFACTS, `element-${tag}-390-${colorScheme}.png`), fullPage: true });
    assert.deepEqual(await axeSeriousViolations(page), [], colorScheme);
    assert.deepEqual(errors, [], colorScheme);
    await context.close();
  }
}

/**
 * Opens one of the example pages (served under the strict CSP, which it checks), recording the
 * .safetensors and .wasm files the page fetches.
 * @param {{newPage: Function, url: string}} env from setup()
 * @param {string} name the page under examples/, e.g. 'gqa-twins.html'
 * @returns {Promise<{page: object, errors: string[], fetched: string[]}>} fetched: their paths, in order
 */
export async function openExample(env, name) {
  const { page, errors } = await env.newPage({ viewport: { width: 1000, height: 900 } });
  const fetched = [];
  page.on('request', (r) => { if (/\.(safetensors|wasm)$/.test(new URL(r.url()).pathname)) fetched.push(new URL(r.url()).pathname); });
  const res = await page.goto(`${env.url}examples/${name}`);
  assert.equal(res.headers()['content-security-policy'], EXAMPLES_CSP);
  return { page, errors, fetched };
}

/**
 * Adds a <tag> with `attrs` to the page's <main> and waits for its mha-error event: returns the
 * event's message and the text the element shows in its error part.
 * @param {object} page a playwright page showing one of the example pages
 * @param {string} tag
 * @param {Record<string, string>} attrs
 * @returns {Promise<{event: string, shown: string}>}
 */
export function elementError(page, tag, attrs) {
  return page.evaluate(async ([t, a]) => {
    const el = document.createElement(t);
    for (const [k, v] of Object.entries(a)) el.setAttribute(k, v);
    const ev = new Promise((r) => el.addEventListener('mha-error', (e) => r(e.detail.error.message)));
    document.querySelector('main').prepend(el);
    const event = await ev;
    await el.updateComplete;
    return { event, shown: el.shadowRoot.querySelector('[part="error"]')?.textContent ?? '' };
  }, [tag, attrs]);
}

/**
 * Scrolls to each element in turn, as a reader would, until it has left its placeholder: the
 * trained-model elements fetch their models only within one viewport of the visible page
 * (`loading="lazy"`, trained-shared.js). Ends scrolled to the first.
 * @param {import('playwright-core').Page} page
 * @param {string[]} selectors
 */
export async function reveal(page, selectors) {
  for (const s of [...selectors].reverse()) {
    await revealUntil(page, s, (el) => el && el.shadowRoot && !el.shadowRoot.querySelector('[part="placeholder"]'), 60_000);
  }
}

/**
 * Waits until every mha- element in the page (and in the elements' shadow roots) has rendered: no
 * placeholder of a lazy element, no loading line, every Lit element's update done.
 * @param {import('playwright-core').Page} page
 * @param {number} [timeout] ms
 */
export async function allRendered(page, timeout = 120_000) {
  await page.waitForFunction(async () => {
    const all = [];
    const walk = (root) => {
      for (const el of root.querySelectorAll('*')) {
        if (el.localName.startsWith('mha-')) all.push(el);
        if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    await Promise.all(all.map((el) => el.updateComplete));
    return all.every((el) => el.shadowRoot &&
      !el.shadowRoot.querySelector('[part="placeholder"], [part="loading"], .loading'));
  }, null, { timeout, polling: 250 });
}

/**
 * Scrolls the element `sel` into view and waits until `has(el)` holds, scrolling to it again while
 * it does not, as a reader would: the trained elements passed on the way fetch their models and
 * grow, which can push the element out of view before it comes near enough to fetch its own.
 * @param {import('playwright-core').Page} page
 * @param {string} sel a selector (its first element in the document)
 * @param {(el: Element) => unknown} has evaluated in the page (written without closures)
 * @param {number} [timeout] ms
 */
export async function revealUntil(page, sel, has, timeout = 90_000) {
  const end = Date.now() + timeout;
  for (;;) {
    await page.locator(sel).first().scrollIntoViewIfNeeded();
    try {
      await page.waitForFunction(([s, f]) => (0, eval)(f)(document.querySelector(s)), [sel, has.toString()],
        { timeout: Math.max(1, Math.min(5_000, end - Date.now())) });
      return;
    } catch (e) {
      if (Date.now() >= end) throw e;
    }
  }
}

/**
 * Serves local model folders to `page` under `/hf/`, as a model host would: `/hf/<rel>` answers the
 * file `resolve(rel)` names (JSON as application/json, the rest as bytes), 404 when it names none,
 * when no such file exists, or when `rel` climbs out with ".."; a Range request (`bytes=a-b`) is
 * answered 206 with that part and its Content-Range, as the model hosts do. `served`, when given,
 * gets [rel, status, bytes] of each answer.
 * @param {import('playwright-core').Page} page
 * @param {(rel: string) => string|null} resolve the local path of a URL path below /hf/
 * @param {Array<[string, number, number]>} [served]
 */
export function serveModelFolders(page, resolve, served = []) {
  return page.route('**/hf/**', (route) => {
    const rel = decodeURIComponent(new URL(route.request().url()).pathname).replace(/^\/hf\//, '');
    const f = rel.includes('..') ? null : resolve(rel);
    if (!f || !existsSync(f) || !statSync(f).isFile()) {
      served.push([rel, 404, 0]);
      return route.fulfill({ status: 404, body: 'not found' });
    }
    const body = readFileSync(f);
    const contentType = rel.endsWith('.json') ? 'application/json' : 'application/octet-stream';
    const range = /^bytes=(\d+)-(\d+)$/.exec(route.request().headers().range ?? '');
    if (range && Number(range[1]) < body.length) {
      const a = Number(range[1]), b = Math.min(Number(range[2]), body.length - 1);
      served.push([rel, 206, b + 1 - a]);
      return route.fulfill({ status: 206, contentType, headers: { 'Content-Range': `bytes ${a}-${b}/${body.length}` }, body: body.subarray(a, b + 1) });
    }
    served.push([rel, 200, body.length]);
    return route.fulfill({ status: 200, contentType, body });
  });
}

/** A `serveModelFolders` resolver for named folders: `/hf/<name>/<file>` is `folders[name]/<file>`. */
export const namedFolders = (folders) => (rel) => {
  const [name, ...rest] = rel.split('/');
  return Object.hasOwn(folders, name) ? path.join(folders[name], ...rest) : null;
};

/**
 * Opens the lesson with every element drawn, as a reader scrolling through it would see it: each
 * `mha-` element in <main> (marked `data-height-index` = its order) scrolled to, last to first,
 * until it has drawn; then the composition experiment's results shown, every render settled and
 * the fonts loaded.
 * @param {{newPage: Function, url: string}} env from setup()
 * @param {{width: number, height: number}} viewport
 * @param {'light'|'dark'} [colorScheme]
 * @returns {Promise<{page: object, errors: string[], context: object}>}
 * @throws {Error} naming the element when one has not drawn in 90 s
 */
export async function openDrawnLesson(env, viewport, colorScheme = 'light') {
  const { page, errors, context } = await env.newPage({ viewport, colorScheme });
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached', timeout: 60_000 });
  const n = await page.evaluate(() => {
    const els = [...document.querySelectorAll('main *')].filter((e) => e.localName.startsWith('mha-'));
    els.forEach((e, i) => { e.dataset.heightIndex = String(i); });
    return els.length;
  });
  // last to first: an element above that loads meanwhile can push the one waited for out of the
  // loading margin again (the browser keeps the anchor in view), so it is scrolled to once more
  for (let i = n - 1; i >= 0; i--) {
    const el = page.locator(`[data-height-index="${i}"]`);
    const drawn = () => page.waitForFunction((i) => {
      const e = document.querySelector(`[data-height-index="${i}"]`);
      return e.shadowRoot && !e.shadowRoot.querySelector('[part="placeholder"]');
    }, i, { timeout: 5_000 }).then(() => true, () => false);
    const until = Date.now() + 90_000;
    for (;;) {
      await el.scrollIntoViewIfNeeded();
      if (await drawn()) break;
      if (Date.now() > until) throw new Error(`element ${i} (${await el.evaluate((e) => `${e.localName}#${e.id}`)}) not drawn in 90 s`);
    }
  }
  // the composition experiment's results drawn too (it shows them after the reader's prediction)
  await page.evaluate(() => { const el = document.querySelector('#composition'); if (el) { el.revealed = true; return el.updateComplete; } });
  await allRendered(page, 180_000);
  await page.evaluate(() => document.fonts.ready);
  return { page, errors, context };
}
