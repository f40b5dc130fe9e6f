/**
 * loadModel: reads a model from any of the formats it knows and builds its LanguageModel
 * (language-model.js). Reading is formats/index.js readModel's (open the source as a folder →
 * detect the format → read it), imported on the first call; building is here: the tokenizer from
 * what the reader gives (tokenizers.js), the weights held as `weightStorage` says (formats/half.js),
 * then the one `new LanguageModel`.
 *
 * Formats: this project's model file (formats/charlm.js, docs/trained-models.md), a Hugging Face
 * model folder (formats/hf.js), a llama2.c checkpoint with its tokenizer.bin (formats/llama2c.js).
 * @module model
 */
import { MHAError } from '../engine/errors.js';
import { weightTarget, convertWeights, allMatrices16, WEIGHT_STORAGES } from '../formats/half.js';
import { MODEL_FORMAT } from '../formats/charlm.js';
import { LanguageModel, KEEP_JS_WEIGHTS_BYTES } from './language-model.js';
import { tokenizerOf } from './tokenizers.js';

export { LanguageModel, KEEP_JS_WEIGHTS_BYTES, MODEL_FORMAT };

/**
 * The class of a loaded model under its first name: the same class as LanguageModel (kept so
 * that code written against `CharModel` keeps working; it runs byte-pair models too).
 */
export const CharModel = LanguageModel;

// The readers of model files and folders (formats/index.js and what it imports) load with the first
// loadModel: a page that only builds layers (the widget, the lesson's first sections) does not
// download them.
let formats = null;
const readers = () => (formats ??= import('../formats/index.js'));

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', msg);

/** Every token's text, by id: the vocabulary of a model whose tokenizer is an object. */
const piecesOf = (tokenizer, vocabSize) => Array.from({ length: vocabSize }, (_, i) => tokenizer.piece(i));

/**
 * The LanguageModel of what a reader read (formats/index.js readModel): its tokenizer built, its
 * weights held as `storage` says (formats/half.js), staged into the core block by block: the
 * blocks a reader reads one at a time (`read.blocks`: hf.js), else the ones it gave in
 * `weights.layers`.
 */
async function buildModel(mha, read, storage) {
  const tokenizer = tokenizerOf(read.tokenizer);
  const vocab = read.vocab ?? piecesOf(tokenizer, read.config.vocabSize);
  const fileType = read.fileType ?? null;
  const weightType = weightTarget(storage, fileType, read.matrices16 ?? allMatrices16(read.weights));
  const weights = convertWeights(read.weights, false, weightType, fileType);
  const given = read.blocks ? null : weights.layers;
  weights.layers = [];
  async function* blocks() {
    if (given) while (given.length) yield convertWeights(given.shift(), true, weightType, fileType);   // each let go of once staged
    else for await (const lw of read.blocks) yield convertWeights(lw, true, weightType, fileType);
  }
  return LanguageModel.load(mha, { ...read, tokenizer, vocab, weights, weightType }, blocks());
}

/**
 * Loads a model into the engine. Sources:
 * - this project's model file (docs/trained-models.md): bytes, a URL, a file path in Node, a File;
 * - a Hugging Face model folder (GPT2LMHeadModel, LlamaForCausalLM; hf.js): a URL ending in "/",
 *   a directory path or `file:` URL in Node, a FileSystemDirectoryHandle or a list of Files, holding
 *   config.json, model.safetensors (or model.safetensors.index.json and its shards) and the
 *   tokenizer (tokenizer.json, or GPT-2's vocab.json + merges.txt);
 * - a llama2.c checkpoint (format version 0 or 1, recognized by its bytes) with, as
 *   `opts.tokenizer`, its tokenizer.bin (bytes, URL, path or File), or both in one list of Files
 *   (the tokenizer found by its name: tokenizer.bin, tok512.bin …).
 * A model without a tokenizer loads too: run() and generator() then take token ids (arrays of
 * integers), and tokens show as `<id>`.
 * @param {object} mha an instance from createMHA()
 * @param {ArrayBuffer|ArrayBufferView|string|URL|FileSystemDirectoryHandle|File|FileList|File[]} source
 *   opened by formats/sources.js openSource (one File, or a File list without config.json holding
 *   one model file, is that file) and read by formats/index.js readModel
 * @param {{tokenizer?: ArrayBuffer|ArrayBufferView|string|URL|File, progress?: (p: {file: string, loaded: number,
 *   total: number|null, fraction: number|null}) => void, weightStorage?: 'file'|'float16'|'float32'}} [opts] tokenizer: a llama2.c tokenizer.bin;
 *   progress: called as the bytes of each file arrive (read from disk in chunks of 8 MB, fetched
 *   over http, read from Files): `loaded` bytes of every file so far (never decreasing), `total`
 *   the sizes of the files started so far (its size on disk, a File's size, an http Content-Length
 *   or Content-Range; null while unknown: no Content-Length, or a compressed body), which grows as
 *   each next file of a folder starts (config.json, the weights' header, the tokenizer files; the
 *   weights then arrive block by block, and their bytes no tensor needs, such as GPT-2's mask
 *   buffers, count as read once the last block is in), so `fraction` = loaded / total may step
 *   back then; the last event has loaded === total and fraction 1. Bytes given directly give one event.
 *   weightStorage: how the weight matrices (embeddings, W_Q, W_K, W_V, W_O, the MLP's, lm_head)
 *   are held in wasm memory: 'file' (default) keeps a float16 or bfloat16 file's matrices 16-bit
 *   (half the memory of float32; the results are those of their values widened to float32, the
 *   same as 'float32' gives for that file) and a float32 file's float32; 'float16' rounds float32
 *   (and bfloat16) matrices to float16 (to nearest; half the memory; log-probs then differ from
 *   the float32 model's by the rounding of the weights, about 2^-11 of each weight relative, and a
 *   weight beyond ±65504 is refused); 'float32' widens everything (twice a 16-bit file's memory).
 *   The model's `weightType` says what was chosen.
 * @returns {Promise<LanguageModel>} config.tokenizer says which tokenizer it has: 'characters',
 *   'llama2c', 'hf' (hf-tokenizer.js) or 'none' (token ids only); config.family 'gpt2' or 'llama'
 *   for a Hugging Face folder, 'llama2c' for a llama2.c checkpoint
 * @throws {MHAError} INVALID_ARGUMENT (unreadable source, a malformed file, a missing tensor or
 *   metadata field, a refused configuration: each message names the file and the key or tensor;
 *   an unknown weightStorage; with 'float16', a weight beyond ±65504), SHAPE_MISMATCH (a tensor's
 *   shape), NON_FINITE (a NaN/Inf weight)
 */
export async function loadModel(mha, source, opts = {}) {
  const storage = opts?.weightStorage ?? 'file';
  if (!WEIGHT_STORAGES.includes(storage)) {
    throw invalid(`loadModel: weightStorage must be one of ${WEIGHT_STORAGES.map((x) => `'${x}'`).join(', ')}, got ${JSON.stringify(storage)}`);
  }
  const { readModel } = await readers();
  return buildModel(mha, await readModel(source, { tokenizer: opts?.tokenizer, progress: opts?.progress }), storage);
}
