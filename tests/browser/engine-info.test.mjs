// <mha-engine-info> on a plain example page: the status line names the engine's version, build and
// threads as `mha.info` gives them, with one `mha-engine` event; an engine that fails to load gives
// one message and one `mha-error`; an engine set while another is still loading wins (the older
// one's result is dropped, not shown).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openExample } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('<mha-engine-info>: ready, failed and superseded engines', async () => {
  const { page, errors } = await openExample(env, 'stepper.html');
  const r = await page.evaluate(async () => {
    const api = await import('/dist/mha-components.js');
    const mha = await api.getEngine();
    const add = (engine) => {
      const el = document.createElement('mha-engine-info');
      const events = [];
      el.addEventListener('mha-engine', (e) => events.push(['mha-engine', e.detail.info.tier]));
      el.addEventListener('mha-error', (e) => events.push(['mha-error', e.detail.error.message]));
      if (engine !== undefined) el.engine = engine;
      document.querySelector('main').prepend(el);
      return { el, events };
    };
    const text = (el) => el.shadowRoot.querySelector('[part="status"]').textContent.trim();
    const settle = async (el) => { for (let i = 0; i < 5; i++) { await new Promise((f) => setTimeout(f, 50)); await el.updateComplete; } };

    const shared = add();
    await settle(shared);
    const failed = add(Promise.reject(new Error('no such build')));
    await settle(failed);
    // a slow engine replaced by a ready one before it resolves: the ready one is shown
    let release;
    const slow = new Promise((f) => { release = f; });
    const swapped = add(slow);
    await settle(swapped);
    const pendingText = text(swapped.el);
    swapped.el.engine = { info: { version: '9.9.9', tier: 'scalar', threads: 1 } };
    await settle(swapped.el);
    release({ info: { version: '0.0.0-stale', tier: 'simd', threads: 4 } });
    await settle(swapped.el);
    return {
      info: mha.info,
      shared: { text: text(shared.el), events: shared.events, info: shared.el.info, error: shared.el.error },
      failed: { text: text(failed.el), events: failed.events, info: failed.el.info, error: failed.el.error?.message, role: failed.el.shadowRoot.querySelector('[part="status"]').getAttribute('role') },
      swapped: { pendingText, text: text(swapped.el), events: swapped.events },
    };
  });
  const { version, tier, threads } = r.info;
  assert.ok(version && tier && threads >= 1, JSON.stringify(r.info));
  assert.match(r.shared.text, new RegExp(`^Engine ready · version ${version.replace(/\./g, '\\.')} · build ${tier}.* · ${threads} threads?\\.`));
  assert.deepEqual(r.shared.events, [['mha-engine', tier]]);
  assert.deepEqual([r.shared.info.tier, r.shared.error], [tier, null]);
  assert.equal(r.failed.text, 'The attention engine could not be loaded: no such build');
  assert.deepEqual(r.failed.events, [['mha-error', 'no such build']]);
  assert.deepEqual([r.failed.info, r.failed.error, r.failed.role], [null, 'no such build', 'alert']);
  assert.equal(r.swapped.pendingText, 'Loading the attention engine…');
  assert.equal(r.swapped.text, 'Engine ready · version 9.9.9 · build scalar (no SIMD) · 1 thread.');
  assert.deepEqual(r.swapped.events, [['mha-engine', 'scalar']]);
  assert.deepEqual(errors, []);
});
