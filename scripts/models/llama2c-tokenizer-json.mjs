#!/usr/bin/env node
// A Hugging Face tokenizer.json from a llama2.c tokenizer.bin (pieces + merge scores), in the format of
// Llama 2's published tokenizer.json (the "legacy" SentencePiece-style BPE of meta-llama/Llama-2-*-hf
// and TinyLlama): model BPE with byte_fallback, unk_token <unk>, fuse_unk; normalizer Prepend "▁" then
// Replace " " → "▁"; no pre-tokenizer; post-processor TemplateProcessing putting <s> first; decoder
// Replace "▁" → " ", ByteFallback, Fuse, Strip one leading space.
//
// The merges are built as Hugging Face's transformers builds them from a SentencePiece model
// (convert_slow_tokenizer.py, SentencePieceExtractor.extract with the pieces' scores): for every piece,
// each split into a left and a right part that are both pieces is a merge; all merges sorted by the
// merged piece's score, highest first (a stable sort: a piece's splits in order of the left, then
// right part's id). llama2.c's encode merges the adjacent pair whose merged piece scores highest, so
// the two agree except where one merged piece is reachable by two splits at once in a text (llama2.c
// takes the leftmost, BPE the lower rank).
//
// Pieces: llama2.c's tokenizer export writes SentencePiece's "▁" as " " and the specials as
// "\n<s>\n", "\n</s>\n"; here "▁" is restored and ids 0–2 are <unk>, <s>, </s>.
//   node scripts/models/llama2c-tokenizer-json.mjs tests/fixtures/stories260K/tok512.bin out/tokenizer.json
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readLlama2cTokenizer } from '../../web/lib/src/formats/llama2c.js';

const SPECIALS = ['<unk>', '<s>', '</s>'];

/**
 * The tokenizer.json object of a llama2.c tokenizer.
 * @param {{pieces: Uint8Array[], scores: ArrayLike<number>}} tok as readLlama2cTokenizer returns
 *   (ids 0–2 the specials, 3–258 the byte pieces <0x00>…<0xFF>)
 * @returns {object} tokenizer.json (JSON.stringify it to write the file)
 */
export function llama2cTokenizerJson({ pieces, scores }) {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const vocab = {};
  const score = new Map();
  pieces.forEach((p, i) => {
    const s = i < SPECIALS.length ? SPECIALS[i] : utf8.decode(p).replaceAll(' ', '\u2581');
    if (!Object.hasOwn(vocab, s)) {
      vocab[s] = i;
      score.set(s, scores[i]);
    }
  });
  const merges = [];
  for (const [piece, id] of Object.entries(vocab)) {
    if (id < 3 + 256) continue;   // specials and byte pieces are never the result of a merge
    const chars = Array.from(piece);
    const local = [];
    for (let k = 1; k < chars.length; k++) {
      const l = chars.slice(0, k).join('');
      const r = chars.slice(k).join('');
      if (Object.hasOwn(vocab, l) && Object.hasOwn(vocab, r)) local.push([l, r]);
    }
    local.sort((a, b) => vocab[a[0]] - vocab[b[0]] || vocab[a[1]] - vocab[b[1]]);
    for (const m of local) merges.push({ m, s: score.get(piece) });
  }
  merges.sort((a, b) => b.s - a.s);   // stable (ES2019)
  const special = (content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((c, i) => special(c, i)),
    normalizer: {
      type: 'Sequence',
      normalizers: [{ type: 'Prepend', prepend: '\u2581' }, { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }],
    },
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } },
    },
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ],
    },
    model: {
      type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, vocab, merges: merges.map(({ m }) => m.join(' ')),
    },
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [src, out] = process.argv.slice(2);
  if (!src || !out) {
    console.error('usage: node scripts/models/llama2c-tokenizer-json.mjs <tokenizer.bin> <tokenizer.json>');
    process.exit(2);
  }
  const tj = llama2cTokenizerJson(readLlama2cTokenizer(fs.readFileSync(src)));
  fs.writeFileSync(out, JSON.stringify(tj, null, 2));
  console.log(`${out}: ${Object.keys(tj.model.vocab).length} tokens, ${tj.model.merges.length} merges`);
}
