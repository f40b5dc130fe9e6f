// describeStart (web/lib/src/formats/safetensors.js): how the error for a file that is not a
// safetensors file names what the file starts with: printable text shown (tabs and line breaks as
// spaces, a UTF-8 byte-order mark skipped, trimmed, at most 24 characters), anything else as its
// first 8 bytes in hex, and the guess at the kind of file. Mutation testing (StrykerJS) measures
// safetensors.js with this suite, safetensors-reader and safetensors-not-a-model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeStart } from '../web/lib/src/formats/safetensors.js';

const enc = (s) => new TextEncoder().encode(s);
const bytes = (...b) => Uint8Array.from(b);

test('printable text: shown between backquotes, with the kind of file it looks like', () => {
  assert.equal(describeStart(enc('<!DOCTYPE html><html>')), 'starts with `<!DOCTYPE html><html>` (an HTML or XML page: a wrong URL, or a server\'s error page?)');
  assert.equal(describeStart(enc('<html lang="en">')), 'starts with `<html lang="en">` (an HTML or XML page: a wrong URL, or a server\'s error page?)');
  assert.equal(describeStart(enc('<?xml version="1.0"?>')), 'starts with `<?xml version="1.0"?>` (an HTML or XML page: a wrong URL, or a server\'s error page?)');
  assert.equal(describeStart(enc('[1, 2, 3]')), 'starts with `[1, 2, 3]` (JSON text: a manifest or a config, not the model file?)');
  assert.equal(describeStart(enc('{"a": 1}')), 'starts with `{"a": 1}` (JSON text: a manifest or a config, not the model file?)');
  for (const js of ['export default 1;', 'const a = 1;', 'let b;', 'var c;', 'function f() {}', '// a comment', '/* a comment */', '"use strict";', '\'use strict\';']) {
    assert.equal(describeStart(enc(js)), `starts with \`${js}\` (JavaScript source)`, js);
  }
  assert.equal(describeStart(enc('hello world')), 'starts with `hello world` (text)');
});

test('printable text: tabs and line breaks read as spaces, leading space and a byte-order mark skipped, 24 characters at most', () => {
  assert.equal(describeStart(enc('\t\r\n  {"x":\n1}')), 'starts with `{"x": 1}` (JSON text: a manifest or a config, not the model file?)');
  assert.equal(describeStart(bytes(0xef, 0xbb, 0xbf, ...enc('<html>'))), 'starts with `<html>` (an HTML or XML page: a wrong URL, or a server\'s error page?)');
  assert.equal(describeStart(enc('abcdefghijklmnopqrstuvwxyz0123456789abcdef')), 'starts with `abcdefghijklmnopqrstuvwx` (text)');
  // only the first 32 bytes are read: a bad byte after them does not matter
  assert.equal(describeStart(Uint8Array.from([...enc('x'.repeat(32)), 0])), `starts with \`${'x'.repeat(24)}\` (text)`);
  // space (0x20) and tilde (0x7e) are printable; DEL (0x7f) and 0x1f are not
  assert.equal(describeStart(enc(' ~')), 'starts with `~` (text)');
  assert.equal(describeStart(bytes(0x41, 0x7f)), 'starts with bytes 41 7f');
  assert.equal(describeStart(bytes(0x41, 0x1f)), 'starts with bytes 41 1f');
  // only the whole byte-order mark is skipped (skipping part of one would show the text after it)
  assert.equal(describeStart(bytes(0xef, 0xbb, 0x41, 0x42)), 'starts with bytes ef bb 41 42');
  assert.equal(describeStart(bytes(0xef, 0x41, 0xbf, 0x42)), 'starts with bytes ef 41 bf 42');
  assert.equal(describeStart(bytes(0x41, 0xbb, 0xbf, 0x42)), 'starts with bytes 41 bb bf 42');
});

test('binary: the first 8 bytes in hex, gzip and zip named, nothing guessed for other bytes or an empty file', () => {
  assert.equal(describeStart(bytes(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3)), 'starts with bytes 1f 8b 08 00 00 00 00 00 (gzip data: a compressed file served without Content-Encoding?)');
  assert.equal(describeStart(bytes(0x50, 0x4b, 3, 4, 0x14, 0)), 'starts with bytes 50 4b 03 04 14 00 (a zip archive (a PyTorch .pt/.bin checkpoint?))');
  assert.equal(describeStart(bytes(0x1f, 0x8c, 0)), 'starts with bytes 1f 8c 00');
  assert.equal(describeStart(bytes(0x50, 0x4c, 0)), 'starts with bytes 50 4c 00');
  assert.equal(describeStart(bytes(0x1e, 0x8b, 0)), 'starts with bytes 1e 8b 00');
  assert.equal(describeStart(bytes(0x51, 0x4b, 0)), 'starts with bytes 51 4b 00');
  assert.equal(describeStart(bytes(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)), 'starts with bytes 00 01 02 03 04 05 06 07');
  assert.equal(describeStart(new Uint8Array(0)), 'starts with bytes ');
});
