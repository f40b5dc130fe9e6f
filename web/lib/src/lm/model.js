/**
 * loadModel: reads a model from any of the formats it knows and gives it to LanguageModel
 * (language-model.js). It recognizes the source (bytes, a URL, a path, a folder), reads the files
 * (formats/model-folder.js, loaded on the first call), and maps each format onto one shape: the
 * config (LanguageModel.config's fields), the vocabulary, the tokenizer (tokenizers.js) and the core
 * decoder's weights.
 *
 * Formats: this project's model file (formats/charlm.js, docs/trained-models.md), a Hugging Face
 * model folder (formats/hf.js), a llama2.c checkpoint with its tokenizer.bin (formats/llama2c.js).
 * @module model
 */
import { MHAError } from '../engine/errors.js';
import { parseSafetensors } from '../formats/safetensors.js';
import { applyWeightStorage, WEIGHT_STORAGES } from '../formats/half.js';
import { MODEL_FORMAT, metadataJSON, readCharlmConfig, charlmShapes, checkTensors, charlmDecoderWeights } from '../formats/charlm.js';
import { readLlama2cTokenizer } from '../formats/llama2c.js';
import { Llama2cTokenizer, BOS, EOS } from './bpe.js';
import { LanguageModel, KEEP_JS_WEIGHTS_BYTES } from './language-model.js';
import { idsOnlyTokenizer, hfTokenizerAdapter, folderTokenizer, charlmTokenizer } from './tokenizers.js';

export { LanguageModel, KEEP_JS_WEIGHTS_BYTES, MODEL_FORMAT };

/**
 * The class of a loaded model under its first name: the same class as LanguageModel (kept so
 * that code written against `CharModel` keeps working; it runs byte-pair models too).
 */
export const CharModel = LanguageModel;

// The readers of model files and folders (model-folder.js, hf.js) load with the first loadModel:
// a page that only builds layers (the widget, the lesson's first sections) does not download them.
let readersPromise = null;
const readers = () => (readersPromise ??= import('../formats/model-folder.js'));

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', msg);

/**
 * The bytes of a llama2.c tokenizer given as loadModel's `tokenizer` option: any source that names
 * one file (bytes, a URL, a Node path, a File), or a file of the model's own folder by name.
 */
async function tokenizerBytes(tokenizer, folder, progress) {
  const { openSource } = await readers();
  if (typeof tokenizer === 'string' && folder.files?.includes(tokenizer)) return folder.read(tokenizer);
  const src = await openSource(tokenizer, progress);
  if (src.main === null) throw invalid(`loadModel: tokenizer must name one file (a llama2.c tokenizer.bin), got the folder ${src.name}`);
  return src.read(src.main);
}

/**
 * The core decoder's weights from tensors named as this project's files name them (a llama2.c
 * checkpoint is read into the same names), every tensor checked (formats/charlm.js).
 */
function charlmWeights(config, tensors) {
  const inProj = config.kvHeads === config.numHeads && tensors['layers.0.attn.in_proj_weight'] !== undefined;
  checkTensors(tensors, charlmShapes(config, inProj));
  const data = Object.fromEntries(Object.entries(tensors).map(([k, v]) => [k, v.data]));
  return charlmDecoderWeights(config, data, inProj);
}

/** This project's model file (docs/trained-models.md), parsed by parseSafetensors. */
function fromCharlmFile({ metadata, tensors }) {
  const config = readCharlmConfig(metadata);
  const vocab = metadataJSON(metadata, 'vocab');
  const tokenizer = charlmTokenizer(config, vocab, metadata);
  return {
    config, vocab, tokenizer, metadata, weights: charlmWeights(config, tensors),
    training: metadata.training ? metadataJSON(metadata, 'training') : {},
    probes: metadata.probes ? metadataJSON(metadata, 'probes') : null,
  };
}

/** Every token's text, by id: the vocabulary of a model whose tokenizer is an object. */
const piecesOf = (tokenizer, vocabSize) => Array.from({ length: vocabSize }, (_, i) => tokenizer.piece(i));

/** A Hugging Face model folder (sources.js openSource), with its tokenizer files when it has them. */
async function fromHFFolder(folder) {
  const { readHFFolder } = await readers();
  const m = await readHFFolder(folder);
  const tok = await folderTokenizer(folder, m.config.vocabSize, m.family);
  const tokenizer = tok ? hfTokenizerAdapter(tok) : idsOnlyTokenizer('the model folder has no tokenizer.json (nor vocab.json + merges.txt)');
  const config = { ...m.config, family: m.family, tokenizer: tok ? 'hf' : 'none', unk: null,
    bos: m.hf.bos_token_id ?? tok?.bos ?? null, eos: m.hf.eos_token_id ?? tok?.eos ?? null };
  return { config, vocab: piecesOf(tokenizer, config.vocabSize), tokenizer, weights: m.weights, fileType: m.fileType,
    training: { source: `Hugging Face model folder ${folder.name}`, files: m.files } };
}

/**
 * A llama2.c checkpoint's bytes, with its tokenizer.bin: `tokenizerSource` when given, else a
 * llama2.c tokenizer among the files of its folder (a File list holding both).
 */
async function fromLlama2c(bytes, tokenizerSource, folder, progress) {
  const { readLlama2cAnyVersion, LLAMA2C_TOKENIZER_NAME } = await readers();
  const { config: lc, tensors } = readLlama2cAnyVersion(bytes);
  const config = { ...readCharlmConfig({ format: MODEL_FORMAT, config: JSON.stringify({ ...lc, unk: 0 }) }), family: 'llama2c' };
  const beside = (folder.files ?? []).filter((n) => n !== folder.main && LLAMA2C_TOKENIZER_NAME.test(n));
  if ((tokenizerSource === undefined || tokenizerSource === null) && beside.length === 1) tokenizerSource = beside[0];
  let tokenizer;
  if (tokenizerSource !== undefined && tokenizerSource !== null) {
    const tb = await tokenizerBytes(tokenizerSource, folder, progress);
    const t = new Llama2cTokenizer(readLlama2cTokenizer(tb, { vocabSize: config.vocabSize }));
    tokenizer = { encode: (s) => t.encode(s), decode: (ids) => t.decode(ids), piece: (id) => t.piece(id) };
    Object.assign(config, { tokenizer: 'llama2c', bos: BOS, eos: EOS });
  } else {
    tokenizer = idsOnlyTokenizer('no llama2.c tokenizer was given (loadModel(source, {tokenizer}))');
    config.tokenizer = 'none';
  }
  return { config, vocab: piecesOf(tokenizer, config.vocabSize), tokenizer, weights: charlmWeights(config, tensors),
    training: { source: 'llama2.c checkpoint', trainedWith: 'llama2.c' } };
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
 *   one model file, is that file)
 * @param {{tokenizer?: ArrayBuffer|ArrayBufferView|string|URL|File, progress?: (p: {file: string, loaded: number,
 *   total: number|null, fraction: number|null}) => void, weightStorage?: 'file'|'float16'|'float32'}} [opts] tokenizer: a llama2.c tokenizer.bin;
 *   progress: called as the bytes of each file arrive (read from disk in chunks of 8 MB, fetched
 *   over http, read from Files): `loaded` bytes of every file so far (never decreasing), `total`
 *   the sizes of the files read so far plus the one being read (its size on disk, a File's size,
 *   an http Content-Length; null while unknown: no Content-Length, or a compressed body), which
 *   grows as each next file of a folder starts (config.json, the weights, the tokenizer files), so
 *   `fraction` = loaded / total may step back then; the last event has loaded === total and
 *   fraction 1. Bytes given directly give one event.
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
  const { openSource, sniffModelFile, progressCounter } = await readers();
  const progress = progressCounter(opts ? opts.progress : undefined);
  const make = (parts) => {
    const weightType = applyWeightStorage(parts.weights, storage, parts.fileType ?? null);
    return new LanguageModel(mha, { ...parts, weightType });
  };
  const folder = await openSource(source, progress);
  if (folder.main === null) return make(await fromHFFolder(folder));
  const bytes = await folder.read(folder.main);
  if (sniffModelFile(bytes) === 'llama2c') return make(await fromLlama2c(bytes, opts ? opts.tokenizer : undefined, folder, progress));
  return make(fromCharlmFile(parseSafetensors(bytes)));
}
