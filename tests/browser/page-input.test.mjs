// Whatever a user types into the lesson's editable cells is read only as a number: markup, script,
// very long strings, non-numbers and float32-overflowing values are refused with an inline
// message, nothing is executed or inserted, and the engine's numbers keep their last valid state.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

const HOSTILE = [
  '<script>window.__pwned = 1</script>',
  '<img src=x onerror="window.__pwned = 1">',
  '"><svg onload="window.__pwned=1">',
  'abc',
  'NaN',
  'Infinity',
  '-',
  '1e40',
  '-3.5e38',
  '9'.repeat(400),
  'x'.repeat(100000),
  '',
  ' ',
  '0x1F',
  '١٢٣',
];

test('hostile and non-numeric input in an editable cell is refused with an inline message', async () => {
  const { page, errors } = await env.newPage();
  let dialogs = 0;
  page.on('dialog', (d) => { dialogs++; d.dismiss(); });
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  const cheap = page.locator('#stepper [part="output"] td[data-r="0"][data-c="1"]');
  await page.waitForFunction(() => document.querySelector('#stepper').shadowRoot
    ?.querySelector('[part="output"] td[data-r="0"][data-c="1"]')?.textContent.trim() === '4.050');
  assert.equal((await cheap.textContent()).trim(), '4.050');
  const cell = page.locator('#stepper input[aria-label="Alex, cheap"]');
  const before = await page.evaluate(() => document.querySelectorAll('script, img, svg').length);
  for (const s of HOSTILE) {
    // Set the raw text as typing/pasting would (a number input sanitizes non-numbers to '').
    await cell.evaluate((el, text) => {
      el.focus();
      el.value = text;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, s);
    const invalid = await cell.getAttribute('aria-invalid');
    const msg = (await page.locator('#stepper [part="input-error"]').textContent()).trim();
    assert.equal(invalid, 'true', `"${s.slice(0, 40)}" should be refused`);
    assert.match(msg, /Alex · cheap: not accepted — enter a number between/, `message for "${s.slice(0, 40)}"`);
    assert.match(msg, /still use 0\.95/);
    assert.equal((await cheap.textContent()).trim(), '4.050', 'the output keeps its last valid value');
  }
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no script ran');
  assert.equal(await page.evaluate(() => document.querySelectorAll('script, img, svg').length), before, 'no element was inserted');
  assert.equal(dialogs, 0);
  // A valid number afterwards is accepted, clears the message and updates the output.
  await cell.fill('0.5');
  await page.waitForFunction(() => document.querySelector('#stepper').shadowRoot
    .querySelector('[part="output"] td[data-r="0"][data-c="1"]')?.textContent.trim() !== '4.050');
  assert.equal(await cell.getAttribute('aria-invalid'), null);
  assert.equal(await page.locator('#stepper [part="input-error"]').count(), 0);
  assert.ok(Number.isFinite(Number((await cheap.textContent()).trim())));
  assert.deepEqual(errors, []);
});
