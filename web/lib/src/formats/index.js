/**
 * readModel: a model's files, whatever their format, read into one shape — open → detect → read.
 * sources.js opens the source as a folder; the first format whose `detect(folder)` says yes reads
 * it with `read(folder, options)`. lm/model.js imports this module on the first loadModel (the one
 * lazy import of the readers: a page that only builds layers does not download them) and builds
 * the LanguageModel from what it returns.
 * @module formats
 */
import { MHAError } from '../engine/errors.js';
import { openSource, progressCounter } from './sources.js';
import * as hf from './hf.js';
import * as llama2c from './llama2c.js';
import * as charlm from './charlm.js';

/**
 * The formats in the order they are tried: a folder of files is Hugging Face's; one file is a
 * llama2.c checkpoint when its bytes say so, else this project's model file (whose safetensors
 * parser says what a file that is neither is not).
 */
export const FORMATS = Object.freeze([hf, llama2c, charlm]);

/**
 * Reads a model from any source loadModel takes (sources.js openSource).
 * @param {*} source bytes, a URL, a path, a File, a FileList or File[], a FileSystemDirectoryHandle
 * @param {{tokenizer?: *, progress?: (p: import('./sources.js').LoadProgress) => void}} [options]
 *   tokenizer: a llama2.c checkpoint's tokenizer.bin (any source of one file, or a file of the
 *   folder by name); progress: called as the bytes of each file arrive
 * @returns {Promise<{config: object, vocab?: string[], tokenizer: {type: 'characters'|'llama2c'|'hf'|'none'},
 *   weights: object, blocks?: AsyncIterable<object>, fileType?: 'float16'|'bfloat16'|null,
 *   matrices16?: boolean, metadata?: object, training: object, probes?: object|null}>} config:
 *   LanguageModel.config's fields; vocab: the tokens by id when the file stores them (else the
 *   tokenizer's pieces are); tokenizer: what to build the tokenizer from (`{type: 'llama2c',
 *   pieces, scores}`, `{type: 'hf', tokenizer}`, `{type: 'none', why}`); weights: the core
 *   decoder's (decoder.js's spec), 16-bit tensors of fileType as Uint16Arrays; blocks (a reader
 *   that reads by ranges: hf.js): each transformer block's weights, read as it is asked for, and
 *   `weights.layers` empty; matrices16: whether every matrix is of fileType (else found from the arrays)
 * @throws {MHAError} INVALID_ARGUMENT, SHAPE_MISMATCH, NON_FINITE as each reader says; each message
 *   names the file and the field
 */
export async function readModel(source, { tokenizer, progress } = {}) {
  const counter = progressCounter(progress);
  const folder = await openSource(source, counter);
  const tokenizerSource = await openTokenizer(tokenizer, folder, counter);
  const format = await findFormat(folder);
  return format.read(folder, { tokenizer: tokenizerSource, progress: counter });
}

/**
 * The `tokenizer` option opened with the model's source, so that every source is opened in the
 * open step (nothing is read until a reader asks): a folder of its own, or as given when it names a
 * file of the model's folder (a string among `folder.files`) or is absent. Only llama2.c's reader
 * reads it.
 */
async function openTokenizer(tokenizer, folder, counter) {
  if (tokenizer === undefined || tokenizer === null) return null;
  if (typeof tokenizer === 'string' && folder.files?.includes(tokenizer)) return tokenizer;
  return openSource(tokenizer, counter);
}

/** The first format of FORMATS that reads the folder (charlm, the last, takes any one file). */
async function findFormat(folder) {
  for (const format of FORMATS) if (await format.detect(folder)) return format;
  throw new MHAError('INVALID_ARGUMENT', `loadModel: no reader for ${folder.name}`);   // not reached: hf reads folders, charlm single files
}
