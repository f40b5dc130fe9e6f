/**
 * The tokenizer of a loaded model, whatever its format: one object `{encode(text) → ids,
 * decode(ids) → text, piece(id) → the token's text for display}` over llama2.c's byte-pair
 * tokenizer (bpe.js), a Hugging Face folder's tokenizer (hf-tokenizer.js), or none (token ids
 * only). A character-level model has no tokenizer object: LanguageModel maps characters itself.
 * @module tokenizers
 */
import { MHAError } from '../engine/errors.js';
import { Llama2cTokenizer } from './bpe.js';
import { metadataJSON } from '../formats/charlm.js';

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
 * Whether a folder holds a file: from its listing when it has one (no request), else by reading it
 * (an optional read: null when absent).
 */
async function readIfThere(folder, file, maxBytes) {
  if (folder.files && !folder.files.includes(file)) return null;
  return folder.read(file, { maxBytes, optional: true });
}

/**
 * GPT-2's pair of tokenizer files, or null when neither is there.
 * @throws {MHAError} INVALID_ARGUMENT when one of the two is there without the other
 */
async function vocabAndMerges(folder, maxBytes) {
  const vocabJson = await readIfThere(folder, 'vocab.json', maxBytes);
  if (!vocabJson) {
    if (folder.files?.includes('merges.txt')) {
      throw invalid(`loadModel: vocab.json: missing in the model folder ${folder.name} (${folder.absent('vocab.json')}), which has merges.txt: ` +
        'a GPT-2 tokenizer is vocab.json and merges.txt together (or one tokenizer.json)');
    }
    return null;
  }
  const mergesTxt = await readIfThere(folder, 'merges.txt', maxBytes);
  if (!mergesTxt) {
    throw invalid(`loadModel: merges.txt: missing in the model folder ${folder.name} (${folder.absent('merges.txt')}), which has vocab.json: ` +
      'a GPT-2 tokenizer is vocab.json and merges.txt together (or one tokenizer.json)');
  }
  return { vocabJson, mergesTxt };
}

/**
 * The tokenizer files of a folder, as hfTokenizer() takes them, or null when it has none. A folder
 * that lists its files is read without asking for absent ones; a URL folder is asked in the order
 * its family ships them (GPT-2: vocab.json + merges.txt; Llama: tokenizer.json and
 * tokenizer_config.json), so that a folder as published gets no 404.
 */
async function tokenizerFiles(folder, maxBytes, family) {
  const pairFirst = family === 'gpt2' && !folder.files?.includes('tokenizer.json');
  let files = pairFirst ? await vocabAndMerges(folder, maxBytes) : null;
  if (!files) {
    const tokenizerJson = await readIfThere(folder, 'tokenizer.json', maxBytes);
    if (tokenizerJson) files = { tokenizerJson };
    else if (!pairFirst) files = await vocabAndMerges(folder, maxBytes);
  }
  if (!files) return null;
  // GPT-2's pair needs no tokenizer_config.json (its bos/eos are config.json's): not asked for unless listed
  if (files.tokenizerJson || folder.files?.includes('tokenizer_config.json')) {
    const tokenizerConfig = await readIfThere(folder, 'tokenizer_config.json', maxBytes);
    if (tokenizerConfig) files.tokenizerConfig = tokenizerConfig;
  }
  return files;
}

/**
 * The tokenizer files of a Hugging Face folder (tokenizer.json, or GPT-2's vocab.json +
 * merges.txt; tokenizer_config.json when present) as hf-tokenizer.js's tokenizer.
 * @param {import('../formats/sources.js').ModelFolder} folder sources.js's folder
 * @param {number} vocabSize the model's vocab_size: the tokenizer's ids must be below it
 * @param {string} [family] 'gpt2' or 'llama' (hf.js): which files a URL folder is asked for first
 * @returns {Promise<object|null>} null when the folder has no tokenizer files
 * @throws {MHAError} INVALID_ARGUMENT (each message begins "loadModel: " and names the file): one
 *   of vocab.json and merges.txt without the other, a tokenizer file hfTokenizer refuses, ids
 *   beyond vocab_size
 */
export async function folderTokenizer(folder, vocabSize, family) {
  const { HF_LIMITS } = await import('../formats/hf.js');
  const files = await tokenizerFiles(folder, HF_LIMITS.tokenizerBytes, family);
  if (!files) return null;
  const { hfTokenizer } = await import('../formats/hf-tokenizer.js');   // only for a folder with tokenizer files
  let tok;
  try {
    tok = await hfTokenizer(files);
  } catch (e) {
    if (e instanceof MHAError && !e.message.startsWith('loadModel: ')) throw new MHAError(e.code, `loadModel: ${e.message}`);
    throw e;
  }
  if (tok.vocabSize > vocabSize) {
    throw invalid(`loadModel: ${files.tokenizerJson ? 'tokenizer.json' : 'vocab.json'}: the tokenizer has ids up to ${tok.vocabSize - 1}, beyond the model's vocab_size ${vocabSize} in config.json`);
  }
  return tok;
}

/**
 * The tokenizer of this project's model file (formats/charlm.js), its vocabulary checked:
 * `config.tokenizer` 'characters' (null: one id per character, vocab the one-character strings) or
 * 'llama2c' (vocab the byte-pair pieces as UTF-8 text, `__metadata__.scores` their merge scores).
 * @param {object} c readCharlmConfig()
 * @param {*} vocab the parsed `__metadata__.vocab`
 * @param {Object<string, string>} metadata
 * @returns {Llama2cTokenizer|null}
 * @throws {MHAError} INVALID_ARGUMENT: vocab not vocabSize strings (one character each for a
 *   character model), scores missing or not JSON
 */
export function charlmTokenizer(c, vocab, metadata) {
  if (c.tokenizer === 'characters') {
    if (!Array.isArray(vocab) || vocab.length !== c.vocabSize || !vocab.every((s) => typeof s === 'string' && Array.from(s).length === 1)) {
      throw invalid(`loadModel: __metadata__.vocab must be an array of ${c.vocabSize} one-character strings`);
    }
    return null;
  }
  if (!Array.isArray(vocab) || vocab.length !== c.vocabSize || !vocab.every((s) => typeof s === 'string')) {
    throw invalid(`loadModel: __metadata__.vocab must be an array of ${c.vocabSize} strings (the tokenizer's pieces)`);
  }
  const enc = new TextEncoder();
  return new Llama2cTokenizer({ pieces: vocab.map((p) => enc.encode(p)), scores: metadataJSON(metadata, 'scores') });
}
