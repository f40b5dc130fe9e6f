/**
 * The byte-pair tokenizer of llama2.c (Karpathy 2023, run.c `encode` / `decode`), as used by the
 * tinyllamas models (stories260K with tok512.bin; the README in tests/fixtures/stories260K):
 * pieces with scores, SentencePiece-style byte fallback, merges chosen by the merged piece's score.
 *
 * Why our own ~100 lines and not a library: we looked for a maintained npm package that reproduces
 * llama2.c's encode from these files and found none. `@huggingface/tokenizers`, `@lenml/tokenizers`
 * and transformers.js read a Hugging Face tokenizer.json; `sentencepiece-js` and its forks read a
 * SentencePiece .model protobuf; `llama-tokenizer-js` ships Meta's 32,000-piece LLaMA vocabulary and
 * takes a custom one only as its own base64 vocabulary plus a ranked merge list. We have neither
 * file, only llama2.c's (pieces + scores), and llama2.c's rule — merge the pair whose merged piece has
 * the highest score, leftmost on ties — is what the model was trained and is run with. The algorithm
 * is small and exactly specified, so we implement it and test it against llama2.c's published ids.
 *
 * Pieces are handled as byte strings (one char per byte, codes 0–255), so a piece that is not valid
 * UTF-8 on its own and the concatenation of two pieces both work as in llama2.c's C strings.
 * @module bpe
 */
import { MHAError } from '../engine/errors.js';

/** llama2.c's special ids: <unk>, BOS <s>, EOS </s>; byte b's fallback token is b + BYTE_OFFSET. */
export const UNK = 0;
export const BOS = 1;
export const EOS = 2;
export const BYTE_OFFSET = 3;

const bad = (msg) => new MHAError('INVALID_ARGUMENT', msg);
/** Bytes as a byte string: one char (code 0–255) per byte. */
function byteString(u8) {
  let s = '';
  for (let i = 0; i < u8.length; i++) s += String.fromCharCode(u8[i]);
  return s;
}
const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

/**
 * UTF-8 bytes of each Unicode character of `text`, as byte strings. A lone UTF-16 surrogate (not a
 * character, so not encodable) is refused, so that every accepted text round-trips exactly.
 */
function utf8Characters(text) {
  const out = [];
  let i = 0;
  for (const ch of text) {   // iterates code points
    const cp = ch.codePointAt(0);
    if (cp >= 0xd800 && cp <= 0xdfff) {
      throw bad(`encode: text must be well-formed UTF-16, got a lone surrogate U+${cp.toString(16).toUpperCase()} at index ${i}`);
    }
    // The UTF-8 bytes of code point cp (RFC 3629), as a byte string.
    const f = String.fromCharCode;
    if (cp < 0x80) out.push(ch);
    else if (cp < 0x800) out.push(f(0xc0 | (cp >> 6), 0x80 | (cp & 63)));
    else if (cp < 0x10000) out.push(f(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)));
    else out.push(f(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)));
    i += ch.length;
  }
  return out;
}

/**
 * A llama2.c tokenizer over the pieces and scores of a tokenizer file.
 * Source: llama2.c (Karpathy 2023), run.c `encode` and `decode`; tests/fixtures/stories260K/README.md.
 */
export class Llama2cTokenizer {
  /**
   * @param {{pieces: Uint8Array[], scores: ArrayLike<number>}} vocab as `readLlama2cTokenizer` returns
   *   (pieces[i]: the bytes of token i; scores[i]: its merge score); ids 0–2 are <unk>, BOS, EOS
   *   and ids 3–258 the byte pieces `<0x00>`…`<0xFF>`, as in llama2.c
   * @throws {MHAError} INVALID_ARGUMENT: pieces not an array of Uint8Array, scores of another length
   *   or not finite, fewer than 259 pieces (the specials and the 256 byte pieces), or no " " piece
   *   (the dummy prefix every non-empty text starts with)
   */
  constructor({ pieces, scores } = {}) {
    if (!Array.isArray(pieces) || !pieces.every((p) => p instanceof Uint8Array)) {
      throw bad('Llama2cTokenizer: pieces must be an array of Uint8Array');
    }
    if (pieces.length < 259) throw bad(`Llama2cTokenizer: pieces must hold at least 259 tokens (3 specials, 256 bytes), got ${pieces.length}`);
    if (!scores || scores.length !== pieces.length) throw bad(`Llama2cTokenizer: scores must have ${pieces.length} entries (one per piece), got ${scores ? scores.length : scores}`);
    for (let i = 0; i < scores.length; i++) {
      if (!Number.isFinite(scores[i])) throw bad(`Llama2cTokenizer: scores[${i}] must be finite, got ${scores[i]}`);
    }
    /** @type {string[]} each piece as a byte string */
    this.pieces = pieces.map(byteString);
    /** @type {Float64Array} merge scores (the file's float32 values, exactly) */
    this.scores = Float64Array.from(scores);
    /** @type {Map<string, number>} byte string → id; the first id where a piece repeats */
    this.ids = new Map();
    this.pieces.forEach((p, i) => { if (!this.ids.has(p)) this.ids.set(p, i); });
    if (!this.ids.has(' ')) throw bad('Llama2cTokenizer: pieces must include " " (the dummy prefix), got none');
  }

  /** Number of tokens. */
  get vocabSize() { return this.pieces.length; }

  /**
   * Token ids of `text`, as llama2.c's encode: BOS (when `bos`), the dummy-prefix piece " " when the
   * text is non-empty, each UTF-8 character's piece (or its bytes as ids byte + 3 where the character
   * has no piece), then repeatedly the adjacent pair whose concatenation is a piece of the highest
   * score is merged into it (the leftmost such pair on ties; llama2.c ignores scores ≤ −1e10), and
   * EOS when `eos`.
   * @param {string} text any well-formed string ("" gives just [BOS])
   * @param {{bos?: boolean, eos?: boolean}} [options] bos default true, eos default false
   * @returns {number[]} ids, e.g. "Once upon a time" → [1, 403, 407, 261, 378] with tok512.bin
   * @throws {MHAError} INVALID_ARGUMENT: text not a string, or holding a lone surrogate
   */
  encode(text, { bos = true, eos = false } = {}) {
    if (typeof text !== 'string') throw bad(`encode: text must be a string, got ${text === null ? 'null' : typeof text}`);
    const ids = bos ? [BOS] : [];
    if (text.length > 0) ids.push(this.ids.get(' '));
    for (const ch of utf8Characters(text)) {
      const id = this.ids.get(ch);
      if (id !== undefined) ids.push(id);
      else for (let k = 0; k < ch.length; k++) ids.push(ch.charCodeAt(k) + BYTE_OFFSET);
    }
    // merged[i]: the id of pieces[ids[i]] + pieces[ids[i + 1]], or -1. Recomputed only next to a
    // merge; the choice among them is llama2.c's full scan (strict >: leftmost on ties).
    const pair = (i) => this.ids.get(this.pieces[ids[i]] + this.pieces[ids[i + 1]]) ?? -1;
    const merged = [];
    for (let i = 0; i + 1 < ids.length; i++) merged.push(pair(i));
    for (;;) {
      let best = -1;
      let bestScore = -1e10;
      for (let i = 0; i < merged.length; i++) {
        const id = merged[i];
        if (id >= 0 && this.scores[id] > bestScore) { bestScore = this.scores[id]; best = i; }
      }
      if (best < 0) break;
      ids.splice(best, 2, merged[best]);
      merged.splice(best, 1);
      if (best > 0) merged[best - 1] = pair(best - 1);
      if (best < merged.length) merged[best] = pair(best);
    }
    if (eos) ids.push(EOS);
    return ids;
  }

  /**
   * Text of token ids, as llama2.c's decode: the piece after a BOS loses its leading space (the
   * dummy prefix), `<0xHH>` pieces are the byte HH, and the bytes are decoded as UTF-8 (an invalid
   * sequence, e.g. a character cut in half by sampling, becomes U+FFFD). The special tokens <unk>,
   * BOS and EOS decode to nothing. decode(encode(s)) === s for every well-formed string s.
   * @param {ArrayLike<number>} ids token ids in 0..vocabSize-1
   * @returns {string}
   * @throws {MHAError} INVALID_ARGUMENT: an id that is not an integer in 0..vocabSize-1 (names its index)
   */
  decode(ids) {
    if (ids === null || typeof ids !== 'object' || typeof ids.length !== 'number') {
      throw bad(`decode: ids must be an array of token ids, got ${ids === null ? 'null' : typeof ids}`);
    }
    const bytes = [];
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k];
      if (!Number.isInteger(id) || id < 0 || id >= this.pieces.length) {
        throw bad(`decode: ids[${k}] must be an integer in 0..${this.pieces.length - 1}, got ${id}`);
      }
      if (id === UNK || id === BOS || id === EOS) continue;
      let p = this.pieces[id];
      if (k > 0 && ids[k - 1] === BOS && p[0] === ' ') p = p.slice(1);
      const m = BYTE_PIECE.exec(p);
      if (m) bytes.push(parseInt(m[1], 16));
      else for (let c = 0; c < p.length; c++) bytes.push(p.charCodeAt(c));
    }
    return new TextDecoder('utf-8').decode(Uint8Array.from(bytes));
  }

  /**
   * One token's piece as text, for display (a token list under a heatmap): UTF-8 decoded, a byte
   * piece as written in the file (`<0x0A>`), the specials as `<unk>`, `<s>`, `</s>` without the
   * newlines tok512.bin puts around them.
   * @param {number} id an integer in 0..vocabSize-1
   * @returns {string}
   * @throws {MHAError} INVALID_ARGUMENT: id out of range
   */
  piece(id) {
    if (!Number.isInteger(id) || id < 0 || id >= this.pieces.length) {
      throw bad(`piece: id must be an integer in 0..${this.pieces.length - 1}, got ${id}`);
    }
    const p = this.pieces[id];
    const text = new TextDecoder('utf-8').decode(Uint8Array.from(p, (c) => c.charCodeAt(0)));
    return id <= EOS ? text.trim() : text;
  }
}
