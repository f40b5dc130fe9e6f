// A file given as a model that is not a safetensors file (an HTML 404 page, a script, a manifest,
// gzip) is named for what it starts with, not as an absurd header length.
import test from 'node:test';
import assert from 'node:assert/strict';
import { parseSafetensors } from '../web/lib/src/formats/safetensors.js';

const enc = (s) => new TextEncoder().encode(s);
const msg = (bytes) => { try { parseSafetensors(bytes); } catch (e) { assert.equal(e.code, 'INVALID_ARGUMENT'); return e.message; } return null; };

test('a file that is not safetensors says what it starts with', () => {
  assert.equal(msg(enc('<!doctype html>\n<html><body>Not found</body></html>')),
    'safetensors: not a safetensors file: it starts with `<!doctype html> <html><b` (an HTML or XML page: a wrong URL, or a server\'s error page?)');
  assert.match(msg(enc('import { LitElement } from "lit";\nexport class X {}')), /^safetensors: not a safetensors file: it starts with `import \{ LitElement \}.*\(JavaScript source\)$/);
  assert.match(msg(enc('{"models": [{"file": "a.safetensors"}]}')), /not a safetensors file: .*\(JSON text/);
  assert.match(msg(new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2])), /not a safetensors file: it starts with bytes 1f 8b 08 00 00 00 00 00 \(gzip data/);
  // a binary file whose length field is merely wrong keeps the precise message
  assert.match(msg(new Uint8Array([3, 0, 0, 0, 0, 0, 0, 0, 123, 125])), /header length 3 runs past the end of the file \(10 bytes\)/);
});
