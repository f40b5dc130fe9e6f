/**
 * The tokenizer of a loaded model, whatever its format: one object `{encode(text) → ids,
 * decode(ids) → text, piece(id) → the token's text for display}` over llama2.c's byte-pair
 * tokenizer (bpe.js), a Hugging Face folder's tokenizer (formats/hf-tokenizer.js), or none (token
 * ids only), built from what a format's reader gives (formats/index.js readModel). A
 * character-level model has no tokenizer object: LanguageModel maps characters itself.
 * @module tokenizers
 */
import { MHAError } from '../engine/errors.js';
import { Llama2cTokenizer } from './bpe.js';

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', msg);

/**
 * A tokenizer for a model without one: token ids in and out, each token shown as `<id>`.
 * @param {string} why the reason, given by encode's error
 * @returns {{encode(text: string): never, decode(ids: ArrayLike<number>): string, piece(id: number): string}}
 */
export function idsOnlyTokenizer(why) {
  const piece = (id) => `<${id}>`;
  return {
    encode() { throw invalid(`encode: ${why}: give token ids (an array of integers) instead of text`); },
    decode: (ids) => Array.from(ids, piece).join(''),
    piece,
  };
}

/** The token's text from an hf-tokenizer.js tokenizer, or `<id>` when it has no token for the id. */
const hfPiece = (tok, id) => { try { return tok.piece(id); } catch { return `<${id}>`; } };

/**
 * Adapts an hf-tokenizer.js tokenizer: ids it has no token for (the embedding may have more rows
 * than the vocabulary) are shown as `<id>` instead of refused.
 */
export function hfTokenizerAdapter(tok) {
  return {
    encode: (text) => tok.encode(text),
    decode: (ids) => { try { return tok.decode(Array.from(ids)); } catch { return Array.from(ids, (i) => hfPiece(tok, i)).join(''); } },
    piece: (id) => hfPiece(tok, id),
  };
}

/**
 * The tokenizer a reader's `tokenizer` describes (formats/index.js readModel).
 * @param {{type: 'characters'}|{type: 'llama2c', pieces: Uint8Array[], scores: ArrayLike<number>}|
 *   {type: 'hf', tokenizer: object}|{type: 'none', why: string}} data
 * @returns {{encode(text: string): ArrayLike<number>, decode(ids: ArrayLike<number>): string, piece(id: number): string}|null}
 *   null for a character-level model
 * @throws {MHAError} INVALID_ARGUMENT: byte-pair pieces or scores Llama2cTokenizer refuses
 */
export function tokenizerOf(data) {
  switch (data.type) {
    case 'characters': return null;
    case 'llama2c': return new Llama2cTokenizer(data);
    case 'hf': return hfTokenizerAdapter(data.tokenizer);
    default: return idsOnlyTokenizer(data.why);
  }
}
