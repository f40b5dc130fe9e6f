/**
 * The browser side of `npm run bench -- --browser`: bundles scripts/bench/page.mjs with esbuild into
 * build/bench-page/, serves the repository root (scripts/serve.mjs) on a free port, launches Debian's
 * Chromium through playwright-core, and runs each job in a new page of its own browser context
 * (one page per workload: a fresh wasm instance and JS heap, like a separate Node process).
 * @module bench/browser
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { startServer } from '../serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic',
  // a page that computes for minutes must not be throttled as a background tab
  '--disable-background-timer-throttling', '--disable-renderer-backgrounding'];

/**
 * @param {{log?: (s: string) => void}} [o]
 * @returns {Promise<{version: string, run: (job: object) => Promise<object>, close: () => Promise<void>}>}
 *   run resolves to the job's result, or to {fatal} when the page fails
 */
export async function openBrowser({ log = (s) => process.stderr.write(`${s}\n`) } = {}) {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run scripts/setup.sh (apt-get install chromium) or set CHROMIUM_PATH`);
  const outdir = path.join(root, 'build', 'bench-page');
  await build({
    entryPoints: [path.join(here, 'page.mjs')], bundle: true, format: 'esm', platform: 'browser',
    outfile: path.join(outdir, 'page.js'), external: ['/web/lib/src/index.js'], logLevel: 'error',
  });
  fs.writeFileSync(path.join(outdir, 'index.html'),
    '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>mha-wasm bench</title><script type="module" src="page.js"></script>\n');
  const server = await startServer({ port: 0, root });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return {
    version: `Chromium ${browser.version()}`,
    async run(job) {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.on('console', (m) => log(m.text()));
      page.on('pageerror', (e) => log(`  page error: ${e.message}`));
      try {
        await page.goto(`${server.url}build/bench-page/index.html`);
        await page.waitForFunction(() => window.benchReady === true, null, { timeout: 60_000 });
        return await page.evaluate((j) => window.benchRun(j), job);
      } catch (e) {
        return { id: job.id, fatal: String(e.message || e).split('\n')[0] };
      } finally {
        await context.close();
      }
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
