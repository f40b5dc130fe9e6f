/**
 * Tokenizers of Hugging Face model folders, through Hugging Face's Tokenizers.js
 * (`@huggingface/tokenizers`, Apache-2.0, a pure-JS port of the Rust `tokenizers` library that
 * transformers.js uses): byte-level BPE (GPT-2: `vocab.json` + `merges.txt`, or a `tokenizer.json`
 * with a `ByteLevel` pre-tokenizer) and the SentencePiece-style BPE of Llama's `tokenizer.json`
 * (`▁` for spaces, byte fallback `<0xHH>`, `<s>` added in front).
 *
 * llama2.c's `tokenizer.bin` is not read here: no library reads it; bpe.js is the project's own.
 *
 * The files are untrusted input. Before the library sees them this module checks sizes and types
 * (raw text ≤ MAX_FILE_CHARS, at most MAX_VOCAB tokens with ids below MAX_VOCAB, MAX_MERGES merges,
 * MAX_ADDED_TOKENS added tokens, pieces ≤ MAX_PIECE_CHARS long, each component an object with a known
 * `type`, patterns {String}/{Regex}); anything refused, and any error the library itself throws while
 * building or running the tokenizer, becomes an MHAError (INVALID_ARGUMENT) whose message starts with
 * the file name and names the field (`tokenizer.json: model.vocab["a"] must be …`). Nothing is
 * allocated from an unchecked size. (A `Regex` pattern is compiled by the library as given: a
 * pathological regular expression in a hostile file could still be slow.)
 *
 * The library is loaded with a dynamic import, so a page (or bundle chunk) that never loads a
 * Hugging Face folder never downloads it. Served unbundled in a browser, the bare specifier
 * `@huggingface/tokenizers` needs an import map; the bundles in web/lib/dist carry it as a chunk.
 * @module hf-tokenizer
 */
import { MHAError } from '../engine/errors.js';

/** Largest tokenizer.json / vocab.json / merges.txt accepted, in characters of its text (≈ bytes). */
export const MAX_FILE_CHARS = 64 * 1024 * 1024;
/** Most tokens (vocabulary entries) and the bound on every token id (ids are < MAX_VOCAB). */
export const MAX_VOCAB = 1 << 20;
/** Most merge rules. */
export const MAX_MERGES = 1 << 21;
/** Most `added_tokens` entries. */
export const MAX_ADDED_TOKENS = 1 << 16;
/** Longest token or merge piece, in UTF-16 code units. */
export const MAX_PIECE_CHARS = 4096;
/** Deepest nesting of `Sequence` components. */
const MAX_DEPTH = 8;

/** Component types Tokenizers.js implements (types other than these are refused by name). */
const KNOWN_TYPES = Object.freeze({
  normalizer: ['BertNormalizer', 'Precompiled', 'Sequence', 'Replace', 'NFC', 'NFD', 'NFKC', 'NFKD', 'Strip',
    'StripAccents', 'Lowercase', 'Prepend'],
  pre_tokenizer: ['BertPreTokenizer', 'Sequence', 'Whitespace', 'WhitespaceSplit', 'Metaspace', 'ByteLevel', 'Split',
    'Punctuation', 'Digits', 'Replace', 'FixedLength'],
  post_processor: ['TemplateProcessing', 'ByteLevel', 'BertProcessing', 'RobertaProcessing', 'Sequence'],
  decoder: ['ByteLevel', 'WordPiece', 'Metaspace', 'BPEDecoder', 'CTC', 'Sequence', 'Replace', 'Fuse', 'Strip', 'ByteFallback'],
});
/** The array that holds the parts of a `Sequence` component, per component kind. */
const SEQUENCE_FIELD = Object.freeze({
  normalizer: 'normalizers', pre_tokenizer: 'pretokenizers', post_processor: 'processors', decoder: 'decoders',
});

/** Special tokens looked up by name when tokenizer_config.json does not name them. */
const BOS_NAMES = ['<s>', '<|begin_of_text|>', '<|startoftext|>', '<bos>', '<|endoftext|>'];
const EOS_NAMES = ['</s>', '<|end_of_text|>', '<|endoftext|>', '<eos>', '<|eot_id|>'];

const refuse = (file, msg) => new MHAError('INVALID_ARGUMENT', `${file}: ${msg}`);
const what = (v) => (v === null ? 'null' : Array.isArray(v) ? `an array of ${v.length}` : typeof v === 'string'
  ? `a string of ${v.length} characters` : typeof v === 'object' ? 'an object' : `${typeof v} ${String(v).slice(0, 40)}`);
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer);
const quote = (s) => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);

/**
 * The text of a file given as a string, Uint8Array or ArrayBuffer (UTF-8, fatal on invalid bytes),
 * checked against MAX_FILE_CHARS before it is decoded.
 */
function fileText(file, data) {
  if (typeof data === 'string') {
    if (data.length > MAX_FILE_CHARS) throw refuse(file, `the file must be at most ${MAX_FILE_CHARS} characters, got ${data.length}`);
    return data;
  }
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
  if (!bytes) throw refuse(file, `must be the file's text, bytes or (JSON files) parsed object, got ${what(data)}`);
  if (bytes.length > MAX_FILE_CHARS) throw refuse(file, `the file must be at most ${MAX_FILE_CHARS} bytes, got ${bytes.length}`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw refuse(file, `the file is not valid UTF-8 (${cause.message})`);
  }
}

/** A JSON file's parsed value: a plain object is taken as parsed, text or bytes are parsed. */
function jsonFile(file, data) {
  if (isPlainObject(data)) return data;
  const text = fileText(file, data);
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw refuse(file, `not valid JSON (${cause.message}); truncated?`);
  }
}

/** A token (vocabulary key, merge piece, added token's content): a non-empty string ≤ MAX_PIECE_CHARS. */
function checkPiece(file, field, s) {
  if (typeof s !== 'string' || s.length === 0 || s.length > MAX_PIECE_CHARS) {
    throw refuse(file, `${field} must be a non-empty string of at most ${MAX_PIECE_CHARS} characters, got ${what(s)}`);
  }
}

/** A token id: an integer in 0..MAX_VOCAB-1. */
function checkId(file, field, id) {
  if (!Number.isInteger(id) || id < 0 || id >= MAX_VOCAB) {
    throw refuse(file, `${field} must be a token id, an integer in 0..${MAX_VOCAB - 1}, got ${what(id)}`);
  }
}

/**
 * Checks a vocabulary object ({token: id}) and returns the largest id.
 * Ids must be distinct: two tokens with one id would make decode ambiguous.
 */
function checkVocab(file, field, vocab) {
  if (!isPlainObject(vocab)) throw refuse(file, `${field} must be an object {token: id}, got ${what(vocab)}`);
  const seen = new Set();
  let max = -1;
  let n = 0;
  for (const key in vocab) {
    if (!Object.hasOwn(vocab, key)) continue;
    if (++n > MAX_VOCAB) throw refuse(file, `${field} must hold at most ${MAX_VOCAB} tokens, got more`);
    checkPiece(file, `${field} key`, key);
    const id = vocab[key];
    checkId(file, `${field}[${quote(key)}]`, id);
    if (seen.has(id)) throw refuse(file, `${field}[${quote(key)}]: id ${id} is given to two tokens`);
    seen.add(id);
    if (id > max) max = id;
  }
  if (n === 0) throw refuse(file, `${field} must hold at least one token, got none`);
  return max;
}

/** Checks merge rules: "a b" strings or [a, b] pairs of non-empty strings. */
function checkMerges(file, field, merges) {
  if (!Array.isArray(merges)) throw refuse(file, `${field} must be an array of merges ("a b" or ["a", "b"]), got ${what(merges)}`);
  if (merges.length > MAX_MERGES) throw refuse(file, `${field} must hold at most ${MAX_MERGES} merges, got ${merges.length}`);
  for (let i = 0; i < merges.length; i++) {
    const m = merges[i];
    if (typeof m === 'string') {
      const parts = m.split(' ');
      if (parts.length !== 2 || !parts[0] || !parts[1] || m.length > 2 * MAX_PIECE_CHARS) {
        throw refuse(file, `${field}[${i}] must be two tokens separated by one space, got ${quote(m)}`);
      }
    } else if (Array.isArray(m) && m.length === 2) {
      checkPiece(file, `${field}[${i}][0]`, m[0]);
      checkPiece(file, `${field}[${i}][1]`, m[1]);
    } else {
      throw refuse(file, `${field}[${i}] must be "a b" or ["a", "b"], got ${what(m)}`);
    }
  }
}

/**
 * Checks a pipeline component (normalizer, pre_tokenizer, post_processor, decoder): null, or an
 * object whose `type` Tokenizers.js implements; the parts of a Sequence are checked the same way,
 * numbers must be finite and small, patterns {String} or {Regex}. Other fields inside a component are
 * left to the library, whose errors are reported with the file name.
 */
function checkComponent(file, kind, field, c, depth = 0) {
  if (c === null || c === undefined) return;
  if (!isPlainObject(c)) throw refuse(file, `${field} must be an object or null, got ${what(c)}`);
  if (typeof c.type !== 'string') throw refuse(file, `${field}.type must be a string, got ${what(c.type)}`);
  if (!KNOWN_TYPES[kind].includes(c.type)) {
    throw refuse(file, `${field}.type ${quote(c.type)} is not one Tokenizers.js implements (${KNOWN_TYPES[kind].join(', ')})`);
  }
  if (c.type === 'Sequence') {
    const key = SEQUENCE_FIELD[kind];
    const parts = c[key];
    if (depth >= MAX_DEPTH) throw refuse(file, `${field}: Sequence nested deeper than ${MAX_DEPTH}`);
    if (!Array.isArray(parts) || parts.length > 256) throw refuse(file, `${field}.${key} must be an array of at most 256 components, got ${what(parts)}`);
    parts.forEach((p, i) => {
      if (p === null) throw refuse(file, `${field}.${key}[${i}] must be an object, got null`);
      checkComponent(file, kind, `${field}.${key}[${i}]`, p, depth + 1);
    });
  }
  for (const [k, v] of Object.entries(c)) {
    if (typeof v === 'number' && !(Number.isFinite(v) && Math.abs(v) <= MAX_PIECE_CHARS)) {
      throw refuse(file, `${field}.${k} must be a number of magnitude at most ${MAX_PIECE_CHARS}, got ${v}`);
    }
  }
  // Replace and Split match `pattern`: {String: "…"} or {Regex: "…"}; the library only warns on anything
  // else and then matches nothing, which would tokenize differently from the file's intent
  if ('pattern' in c || c.type === 'Split' || (c.type === 'Replace' && kind !== 'post_processor')) {
    const pat = c.pattern;
    const ok = isPlainObject(pat) && Object.keys(pat).length === 1
      && (typeof pat.String === 'string' || typeof pat.Regex === 'string');
    if (!ok) throw refuse(file, `${field}.pattern must be {"String": "…"} or {"Regex": "…"}, got ${what(pat)}`);
  }
  // FixedLength splits text every `length` characters: 0 or a non-integer would never end
  if (c.type === 'FixedLength' && !(Number.isInteger(c.length) && c.length >= 1)) {
    throw refuse(file, `${field}.length must be an integer ≥ 1, got ${what(c.length)}`);
  }
}

/**
 * Checks a parsed tokenizer.json (the Rust `tokenizers` serialization) before the library sees it.
 * Only model.type "BPE" is accepted (GPT-2's byte-level BPE, Llama's SentencePiece-style BPE).
 * @returns {number} the largest token id of model.vocab and added_tokens
 */
function checkTokenizerJson(file, tj) {
  if (!isPlainObject(tj)) throw refuse(file, `must be a JSON object, got ${what(tj)}`);
  const m = tj.model;
  if (!isPlainObject(m)) throw refuse(file, `model must be an object, got ${what(m)}`);
  if (m.type !== 'BPE') {
    throw refuse(file, `model.type must be "BPE" (byte-level BPE as GPT-2, SentencePiece-style BPE as Llama), got ${what(m.type)}`
      + `${typeof m.type === 'string' ? ` ${quote(m.type)}` : ''}`);
  }
  let max = checkVocab(file, 'model.vocab', m.vocab);
  checkMerges(file, 'model.merges', m.merges);
  for (const k of ['unk_token', 'continuing_subword_prefix', 'end_of_word_suffix']) {
    if (m[k] !== undefined && m[k] !== null && (typeof m[k] !== 'string' || m[k].length > MAX_PIECE_CHARS)) {
      throw refuse(file, `model.${k} must be a string or null, got ${what(m[k])}`);
    }
  }
  for (const k of ['byte_fallback', 'ignore_merges', 'fuse_unk']) {
    if (m[k] !== undefined && m[k] !== null && typeof m[k] !== 'boolean') throw refuse(file, `model.${k} must be a boolean, got ${what(m[k])}`);
  }
  // BPE dropout samples a random segmentation: the library does not implement it; refuse rather than differ
  if (m.dropout !== undefined && m.dropout !== null && m.dropout !== 0) {
    throw refuse(file, `model.dropout must be null or 0 (deterministic BPE), got ${what(m.dropout)}`);
  }
  const added = tj.added_tokens ?? [];
  if (!Array.isArray(added)) throw refuse(file, `added_tokens must be an array, got ${what(added)}`);
  if (added.length > MAX_ADDED_TOKENS) throw refuse(file, `added_tokens must hold at most ${MAX_ADDED_TOKENS} tokens, got ${added.length}`);
  added.forEach((t, i) => {
    if (!isPlainObject(t)) throw refuse(file, `added_tokens[${i}] must be an object {id, content, …}, got ${what(t)}`);
    checkId(file, `added_tokens[${i}].id`, t.id);
    checkPiece(file, `added_tokens[${i}].content`, t.content);
    for (const k of ['special', 'lstrip', 'rstrip', 'normalized', 'single_word']) {
      if (t[k] !== undefined && typeof t[k] !== 'boolean') throw refuse(file, `added_tokens[${i}].${k} must be a boolean, got ${what(t[k])}`);
    }
    if (t.id > max) max = t.id;
  });
  for (const kind of Object.keys(KNOWN_TYPES)) checkComponent(file, kind, kind, tj[kind]);
  return max;
}

/**
 * A tokenizer.json equivalent to GPT-2's vocab.json + merges.txt, as Hugging Face's
 * transformers builds it (convert_slow_tokenizer.py, GPT2Converter; the `tokenizer.json` of the
 * `gpt2` repository): model BPE over the vocabulary and the merges in file order (rank = line),
 * no unknown token, ByteLevel pre-tokenizer (GPT-2's regex, no prefix space), ByteLevel decoder,
 * a ByteLevel post-processor that adds nothing, and `<|endoftext|>` (when in the vocabulary) as the
 * special added token. merges.txt: an optional first line `#version: …`, then one merge "a b" a line
 * (GPT2Tokenizer's reader), blank lines ignored.
 * @param {object} vocab parsed vocab.json {token: id}
 * @param {string} mergesText merges.txt's text
 * @returns {object} a tokenizer.json object
 * @throws {MHAError} INVALID_ARGUMENT naming vocab.json or merges.txt and the line or token at fault
 */
export function gpt2TokenizerJson(vocab, mergesText) {
  checkVocab('vocab.json', 'vocabulary', vocab);
  const lines = mergesText.split('\n');
  if (lines.length > MAX_MERGES + 2) throw refuse('merges.txt', `must hold at most ${MAX_MERGES} merges, got ${lines.length} lines`);
  const merges = [];
  lines.forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '' || (i === 0 && line.startsWith('#version'))) return;
    const parts = line.split(' ');
    if (parts.length !== 2 || !parts[0] || !parts[1]) throw refuse('merges.txt', `line ${i + 1} must be two tokens separated by one space, got ${quote(line)}`);
    merges.push(line);
  });
  const eot = '<|endoftext|>';
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: Object.hasOwn(vocab, eot)
      ? [{ id: vocab[eot], content: eot, single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }] : [],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, vocab, merges,
    },
  };
}

/**
 * Tokenizers.js 0.2.0's ByteFallback decoder decodes each run of <0xHH> tokens with a default
 * TextDecoder, which drops a U+FEFF (byte-order mark) at the start of the run; the Rust library keeps it.
 * Swap in a decoder that keeps it (ignoreBOM), in every decoder of a Sequence, so decode(encode(s)) === s.
 */
function fixBom(decoder, depth = 0) {
  if (!decoder || depth > MAX_DEPTH) return;
  if (decoder.text_decoder instanceof TextDecoder && !decoder.text_decoder.ignoreBOM) {
    decoder.text_decoder = new TextDecoder('utf-8', { fatal: decoder.text_decoder.fatal, ignoreBOM: true });
  }
  if (Array.isArray(decoder.decoders)) for (const d of decoder.decoders) fixBom(d, depth + 1);
}

/** The content of a tokenizer_config.json special-token entry ("<s>" or {content: "<s>", …}). */
function tokenName(v) {
  if (typeof v === 'string') return v;
  if (isPlainObject(v) && typeof v.content === 'string') return v.content;
  return undefined;
}

/**
 * A tokenizer for a Hugging Face model folder, through Tokenizers.js.
 *
 * Give `tokenizerJson` (tokenizer.json), or GPT-2's `vocabJson` + `mergesTxt` (turned into the
 * equivalent tokenizer.json object by `gpt2TokenizerJson`); tokenizer.json wins when both are given.
 * Each file may be its text, its bytes (Uint8Array/ArrayBuffer) or, for the JSON files, the parsed
 * object. `tokenizerConfig` (tokenizer_config.json, optional) names bos_token/eos_token and
 * `additional_special_tokens`.
 *
 * - `encode(text, {addSpecialTokens = true})`: ids as Hugging Face's `tokenizer(text)` gives them,
 *   special tokens included (Llama: `<s>` first; GPT-2: none).
 * - `decode(ids)`: the text, with special tokens skipped and no clean-up of spaces, so that
 *   `decode(encode(s)) === s` (an id sequence that cuts a character's UTF-8 bytes gives U+FFFD).
 * - `piece(id)`: one token as text for display: specials by name; byte-level tokens decoded alone
 *   (a token holding part of a character's UTF-8 bytes shows U+FFFD); SentencePiece-style tokens with
 *   `▁` as a space and byte tokens as written (`<0x0A>`), as bpe.js's `piece`.
 * - `vocabSize`: largest id + 1 (the embedding's rows must be at least this many).
 * - `bos`/`eos`: the ids of the begin/end-of-text tokens, from tokenizerConfig, else by the common
 *   names (`<s>`/`</s>`, `<|endoftext|>` for both in GPT-2, …); undefined when neither says. A model
 *   folder's config.json (`bos_token_id`, `eos_token_id`) is the better source where it has them.
 * - `kind`: 'byte-level' (a ByteLevel pre-tokenizer, GPT-2), 'sentencepiece' (byte fallback, Llama)
 *   or 'bpe' (other BPE).
 *
 * @param {{tokenizerJson?: string|Uint8Array|ArrayBuffer|object, vocabJson?: string|Uint8Array|ArrayBuffer|object,
 *   mergesTxt?: string|Uint8Array|ArrayBuffer, tokenizerConfig?: string|Uint8Array|ArrayBuffer|object}} files
 * @returns {Promise<{encode(text: string, options?: {addSpecialTokens?: boolean}): number[], decode(ids: ArrayLike<number>): string,
 *   piece(id: number): string, vocabSize: number, bos?: number, eos?: number, kind: 'byte-level'|'sentencepiece'|'bpe'}>}
 * @throws {MHAError} INVALID_ARGUMENT: no tokenizer files, a file too large, not UTF-8 / JSON, a field of
 *   the wrong type or size (the message names the file and field), a component type Tokenizers.js
 *   does not implement, or an error of the library while building the tokenizer
 */
export async function hfTokenizer(files = {}) {
  const { file, tj, maxId, config, extra } = readTokenizerFiles(files);
  const { Tokenizer } = await import('@huggingface/tokenizers');
  let tok;
  try {
    // The library iterates added_tokens unconditionally; decode never cleans up spaces (exact round trips).
    tok = new Tokenizer({ ...tj, added_tokens: tj.added_tokens ?? [] }, {
      clean_up_tokenization_spaces: false,
      ...(extra ? { additional_special_tokens: extra } : {}),
    });
  } catch (cause) {
    throw refuse(file, `Tokenizers.js could not build the tokenizer: ${cause?.message ?? cause}`);
  }
  fixBom(tok.decoder);
  return tokenizerApi(tok, file, tj, config, maxId);
}

/**
 * The tokenizer files given to hfTokenizer, checked: which file speaks (for the errors), the
 * tokenizer.json object (built from GPT-2's vocab.json + merges.txt when that is what was given),
 * tokenizer_config.json ({} when absent) and its additional special tokens.
 */
function readTokenizerFiles({ tokenizerJson, vocabJson, mergesTxt, tokenizerConfig }) {
  let file;
  let tj;
  if (tokenizerJson !== undefined && tokenizerJson !== null) {
    file = 'tokenizer.json';
    tj = jsonFile(file, tokenizerJson);
  } else if (vocabJson !== undefined && vocabJson !== null && mergesTxt !== undefined && mergesTxt !== null) {
    file = 'vocab.json + merges.txt';
    tj = gpt2TokenizerJson(jsonFile('vocab.json', vocabJson), fileText('merges.txt', mergesTxt));
  } else {
    throw new MHAError('INVALID_ARGUMENT', 'hfTokenizer: give tokenizerJson (tokenizer.json) or vocabJson and mergesTxt (GPT-2\'s vocab.json and merges.txt)');
  }
  const maxId = checkTokenizerJson(file, tj);
  let config = {};
  if (tokenizerConfig !== undefined && tokenizerConfig !== null) {
    config = jsonFile('tokenizer_config.json', tokenizerConfig);
    if (!isPlainObject(config)) throw refuse('tokenizer_config.json', `must be a JSON object, got ${what(config)}`);
  }
  const extra = config.additional_special_tokens;
  if (extra !== undefined && !(Array.isArray(extra) && extra.length <= MAX_ADDED_TOKENS && extra.every((t) => typeof t === 'string'))) {
    throw refuse('tokenizer_config.json', `additional_special_tokens must be an array of strings, got ${what(extra)}`);
  }
  return { file, tj, maxId, config, extra };
}

/**
 * hfTokenizer's result over a built Tokenizers.js tokenizer: vocabSize, bos/eos, kind, and
 * encode / decode / piece with their argument checks (see hfTokenizer).
 */
function tokenizerApi(tok, file, tj, config, maxId) {
  const vocabSize = maxId + 1;
  const idOf = (name) => (name === undefined ? undefined : tok.token_to_id(name));
  const special = new Set((tj.added_tokens ?? []).filter((t) => t.special).map((t) => t.content));
  const firstOf = (names) => idOf(names.find((n) => special.has(n) || tok.token_to_id(n) !== undefined));
  const bos = idOf(tokenName(config.bos_token)) ?? firstOf(BOS_NAMES);
  const eos = idOf(tokenName(config.eos_token)) ?? firstOf(EOS_NAMES);
  const pre = tj.pre_tokenizer;
  const kind = pre?.type === 'ByteLevel' || (pre?.type === 'Sequence' && pre.pretokenizers.some((p) => p.type === 'ByteLevel'))
    ? 'byte-level' : tj.model.byte_fallback ? 'sentencepiece' : 'bpe';
  const run = (verb, f) => {
    try {
      return f();
    } catch (cause) {
      if (cause instanceof MHAError) throw cause;
      throw refuse(file, `Tokenizers.js failed to ${verb}: ${cause?.message ?? cause}`);
    }
  };
  const checkIds = (ids) => {
    if (ids === null || typeof ids !== 'object' || typeof ids.length !== 'number') {
      throw new MHAError('INVALID_ARGUMENT', `decode: ids must be an array of token ids, got ${what(ids)}`);
    }
    const out = new Array(ids.length);
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k];
      if (!Number.isInteger(id) || id < 0 || id >= vocabSize || tok.id_to_token(id) === undefined) {
        throw new MHAError('INVALID_ARGUMENT', `decode: ids[${k}] must be a token id of this vocabulary (an integer in 0..${vocabSize - 1} that names a token), got ${id}`);
      }
      out[k] = id;
    }
    return out;
  };

  return {
    kind,
    vocabSize,
    bos,
    eos,
    /** Token ids of `text` (special tokens added as the tokenizer.json's post-processor says, unless addSpecialTokens is false). */
    encode(text, { addSpecialTokens = true } = {}) {
      if (typeof text !== 'string') throw new MHAError('INVALID_ARGUMENT', `encode: text must be a string, got ${what(text)}`);
      return run('encode', () => tok.encode(text, { add_special_tokens: addSpecialTokens }).ids);
    },
    /** Text of token ids (specials skipped, spaces not cleaned up). */
    decode(ids) {
      const list = checkIds(ids);
      if (list.length === 0) return '';
      return run('decode', () => tok.decode(list, { skip_special_tokens: true, clean_up_tokenization_spaces: false }));
    },
    /** One token as text for display: a special token by its name, others decoded alone. */
    piece(id) {
      const [i] = checkIds([id]);
      const t = tok.id_to_token(i);
      if (special.has(t)) return t;
      // SentencePiece-style: "▁" is a space and <0xHH> stays as written (as bpe.js's piece); decoding
      // alone would strip the leading space (the decoder's Strip of the dummy prefix)
      if (kind === 'sentencepiece') return t.replaceAll('\u2581', ' ');
      return run('decode', () => tok.decode([i], { skip_special_tokens: false, clean_up_tokenization_spaces: false }));
    },
  };
}
