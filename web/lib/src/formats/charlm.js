/**
 * This project's model file (docs/trained-models.md): a safetensors file whose `__metadata__`
 * holds `format` = MODEL_FORMAT, the JSON `config`, `vocab` (and `scores` for a byte-pair
 * tokenizer), `training` and `probes`, and whose tensors are named as scripts/train/charlm.py's
 * state dict (`tok_emb`, `pos_emb`, `layers.<l>.ln1 / attn / ln2 / mlp`, `ln_f`, `head`: the output
 * projection, lm_head). This module checks the config and the tensors and maps them onto the core
 * decoder's weights (decoder.js's spec); it computes nothing. `detect` and `read` are its part of
 * readModel (index.js): any one file that is not a llama2.c checkpoint is read here, so that a file
 * that is not a model gets the safetensors parser's errors.
 * @module charlm
 */
import { MHAError } from '../engine/errors.js';
import { transposed } from './matrices.js';
import { parseSafetensors } from './safetensors.js';

/** The value of `__metadata__.format` this reader reads. */
export const MODEL_FORMAT = 'mha-wasm.charlm/1';

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', msg);

/**
 * One JSON-valued `__metadata__` field, parsed.
 * @param {Object<string, string>} metadata
 * @param {string} key
 * @returns {*}
 * @throws {MHAError} INVALID_ARGUMENT: the field is missing or not JSON
 */
export function metadataJSON(metadata, key) {
  if (typeof metadata[key] !== 'string') throw invalid(`loadModel: __metadata__.${key} is missing`);
  try {
    return JSON.parse(metadata[key]);
  } catch (e) {
    throw invalid(`loadModel: __metadata__.${key} is not JSON (${e.message})`);
  }
}

/** An optional config key: one of `values` (the first is the default). */
function choice(raw, key, values) {
  const v = raw[key];
  if (v === undefined) return values[0];
  if (!values.includes(v)) throw invalid(`loadModel: config.${key} must be one of ${values.map((x) => JSON.stringify(x)).join(', ')}, got ${JSON.stringify(v)}`);
  return v;
}

/** An optional positive number config key below `max` (exclusive), or its default. */
function positive(raw, key, dflt, max) {
  const v = raw[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !(v > 0) || !(v < max)) throw invalid(`loadModel: config.${key} must be a number in (0, ${max}), got ${JSON.stringify(v)}`);
  return v;
}

/** The sizes of a config (file key, config field, largest value), each a positive integer. */
const SIZES = [['vocab_size', 'vocabSize', 65536], ['d_model', 'dModel', 4096], ['num_heads', 'numHeads', 256],
  ['num_layers', 'numLayers', 64], ['d_ff', 'dFF', 65536], ['context', 'context', 65536]];

/** The architecture options of a config (docs/trained-models.md, "Architecture options"), checked. */
function architecture(raw, cfg) {
  cfg.norm = choice(raw, 'norm', ['layernorm', 'rmsnorm']);
  // The file format's first version named the norm's eps `ln_eps` (its norms were LayerNorms);
  // files still carry it, so it is read when `norm_eps` is absent.
  cfg.normEps = raw.norm_eps !== undefined ? positive(raw, 'norm_eps', 1e-5, 1) : positive(raw, 'ln_eps', 1e-5, 1);
  cfg.mlp = choice(raw, 'mlp', ['relu', 'gelu', 'gelu_tanh', 'swiglu']);
  cfg.bias = choice(raw, 'bias', [true, false]);
  cfg.positions = choice(raw, 'positions', ['learned', 'rope']);
  cfg.ropeBase = positive(raw, 'rope_base', 10000, 1e9);
  cfg.ropeInterleaved = choice(raw, 'rope_interleaved', [false, true]);
  cfg.tied = choice(raw, 'tied', [false, true]);
  const kv = raw.kv_heads === undefined ? cfg.numHeads : raw.kv_heads;
  if (!Number.isInteger(kv) || kv < 1 || cfg.numHeads % kv !== 0) {
    throw invalid(`loadModel: config.kv_heads must be a positive integer dividing num_heads = ${cfg.numHeads}, got ${JSON.stringify(raw.kv_heads)}`);
  }
  cfg.kvHeads = kv;
}

/**
 * The configuration of a model file, checked: every size a positive integer, d_model divisible by
 * h, kv_heads dividing h, each architecture option one of its values, unk an id of the vocabulary.
 * @param {Object<string, string>} metadata the file's `__metadata__`
 * @returns {object} LanguageModel.config's fields (vocabSize, dModel, numHeads, kvHeads, numLayers,
 *   dFF, context, norm, normEps, mlp, bias, positions, ropeBase, ropeInterleaved, tied, unk,
 *   tokenizer, dK)
 * @throws {MHAError} INVALID_ARGUMENT naming the metadata field or config key and its value
 */
export function readCharlmConfig(metadata) {
  if (metadata.format !== MODEL_FORMAT) {
    throw invalid(`loadModel: __metadata__.format must be "${MODEL_FORMAT}", got ${JSON.stringify(metadata.format)}`);
  }
  const raw = metadataJSON(metadata, 'config');
  if (raw === null || typeof raw !== 'object') throw invalid('loadModel: __metadata__.config must be a JSON object');
  return charlmConfig(raw);
}

/**
 * A config object in the file's keys (vocab_size, d_model, …, the architecture options, unk),
 * checked as readCharlmConfig checks a file's: the config of a llama2.c header is read by it too.
 * @param {object} raw
 * @returns {object} as readCharlmConfig
 * @throws {MHAError} INVALID_ARGUMENT naming the config key and its value
 */
export function charlmConfig(raw) {
  const cfg = {};
  for (const [key, name, max] of SIZES) {
    const v = raw[key];
    if (!Number.isInteger(v) || v < 1 || v > max) throw invalid(`loadModel: config.${key} must be an integer in [1, ${max}], got ${JSON.stringify(v)}`);
    cfg[name] = v;
  }
  if (cfg.dModel % cfg.numHeads !== 0) throw invalid(`loadModel: config.num_heads = ${cfg.numHeads} must divide d_model = ${cfg.dModel}`);
  architecture(raw, cfg);
  if (!Number.isInteger(raw.unk) || raw.unk < 0 || raw.unk >= cfg.vocabSize) {
    throw invalid(`loadModel: config.unk must be an integer in [0, ${cfg.vocabSize - 1}], got ${JSON.stringify(raw.unk)}`);
  }
  cfg.unk = raw.unk;
  cfg.tokenizer = choice(raw, 'tokenizer', ['characters', 'llama2c']);
  cfg.dK = cfg.dModel / cfg.numHeads;
  return cfg;
}

/** One layer's tensor names → shapes (prefix `layers.<l>.`); see charlmShapes. */
function layerShapes(c, inProj, add) {
  const d = c.dModel, f = c.dFF, kvd = c.kvHeads * c.dK;
  const ln = c.norm === 'layernorm';
  add('ln1.weight', [d]); add('ln2.weight', [d]);
  if (ln) { add('ln1.bias', [d]); add('ln2.bias', [d]); }
  if (inProj) {
    add('attn.in_proj_weight', [3 * d, d]);
    add('attn.in_proj_bias', [3 * d], true);
  } else {
    add('attn.q_proj.weight', [d, d]); add('attn.q_proj.bias', [d], true);
    add('attn.k_proj.weight', [kvd, d]); add('attn.k_proj.bias', [kvd], true);
    add('attn.v_proj.weight', [kvd, d]); add('attn.v_proj.bias', [kvd], true);
  }
  add('attn.out_proj.weight', [d, d]); add('attn.out_proj.bias', [d], true);
  if (c.mlp === 'swiglu') {
    add('mlp.gate.weight', [f, d]); add('mlp.gate.bias', [f], true);
    add('mlp.up.weight', [f, d]); add('mlp.up.bias', [f], true);
  } else {
    add('mlp.fc.weight', [f, d]); add('mlp.fc.bias', [f], true);
  }
  add('mlp.proj.weight', [d, f]); add('mlp.proj.bias', [d], true);
}

/**
 * name → expected shape of every tensor of the architecture (PyTorch's [out, in] for matrices).
 * @param {object} c readCharlmConfig()
 * @param {boolean} inProj the attention is stored in torch.nn.MultiheadAttention's form
 *   (in_proj_weight) rather than as q_proj / k_proj / v_proj
 * @returns {Object<string, number[]>}
 */
export function charlmShapes(c, inProj) {
  const d = c.dModel;
  const s = { 'tok_emb.weight': [c.vocabSize, d], 'ln_f.weight': [d] };
  if (c.positions === 'learned') s['pos_emb.weight'] = [c.context, d];
  if (c.norm === 'layernorm') s['ln_f.bias'] = [d];
  if (!c.tied) s['head.weight'] = [c.vocabSize, d];
  if (c.bias) s['head.bias'] = [c.vocabSize];
  for (let l = 0; l < c.numLayers; l++) {
    layerShapes(c, inProj, (name, shape, isBias) => { if (!isBias || c.bias) s[`layers.${l}.${name}`] = shape; });
  }
  return s;
}

/**
 * Checks that every expected tensor is there with its shape and finite values.
 * @param {Object<string, {shape: number[], data: Float32Array}>} tensors
 * @param {Object<string, number[]>} shapes charlmShapes()
 * @throws {MHAError} INVALID_ARGUMENT (a missing tensor), SHAPE_MISMATCH, NON_FINITE (naming the
 *   tensor and the flat index)
 */
export function checkTensors(tensors, shapes) {
  for (const [name, shape] of Object.entries(shapes)) {
    const t = tensors[name];
    if (!t) throw invalid(`loadModel: tensor "${name}" is missing (expected shape [${shape.join(', ')}])`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new MHAError('SHAPE_MISMATCH', `loadModel: tensor "${name}": expected shape [${shape.join(', ')}], got [${t.shape.join(', ')}]`);
    }
    for (let i = 0; i < t.data.length; i++) {
      if (!Number.isFinite(t.data[i])) throw new MHAError('NON_FINITE', `loadModel: tensor "${name}" has ${t.data[i]} at flat index ${i}`);
    }
  }
}

/** One layer's weights in the core's layout; g(name) is the layer's tensor or null. */
function layerWeights(c, g, inProj) {
  const d = c.dModel;
  const lw = { norm1: { weight: g('ln1.weight'), bias: g('ln1.bias') }, norm2: { weight: g('ln2.weight'), bias: g('ln2.bias') } };
  if (inProj) {
    const w = g('attn.in_proj_weight'), b = g('attn.in_proj_bias');
    lw.wQ = transposed(w, d, 0, d); lw.wK = transposed(w, d, d, d); lw.wV = transposed(w, d, 2 * d, d);
    if (b) { lw.bQ = b.subarray(0, d); lw.bK = b.subarray(d, 2 * d); lw.bV = b.subarray(2 * d); }
  } else {
    lw.wQ = transposed(g('attn.q_proj.weight'), d); lw.wK = transposed(g('attn.k_proj.weight'), d); lw.wV = transposed(g('attn.v_proj.weight'), d);
    lw.bQ = g('attn.q_proj.bias'); lw.bK = g('attn.k_proj.bias'); lw.bV = g('attn.v_proj.bias');
  }
  lw.wO = transposed(g('attn.out_proj.weight'), d);
  lw.bO = g('attn.out_proj.bias');
  if (c.mlp === 'swiglu') {   // silu(W_gate·x) ⊙ (W_up·x)
    lw.wGate = transposed(g('mlp.gate.weight'), d);
    lw.bGate = g('mlp.gate.bias');
    lw.wUp = transposed(g('mlp.up.weight'), d);
    lw.bUp = g('mlp.up.bias');
  } else {
    lw.wFc = transposed(g('mlp.fc.weight'), d);
    lw.bFc = g('mlp.fc.bias');
  }
  lw.wProj = transposed(g('mlp.proj.weight'), c.dFF);
  lw.bProj = g('mlp.proj.bias');
  return lw;
}

/**
 * The core decoder's weights (decoder.js's spec `weights`: matrices row-major [in, out]) from the
 * file's tensors (shapes checked by checkTensors). The file's `head` is the spec's `lmHead` (the output projection, lm_head).
 * @param {object} c readCharlmConfig()
 * @param {Object<string, Float32Array>} t tensor data by name
 * @param {boolean} inProj as charlmShapes
 * @returns {object}
 */
export function charlmDecoderWeights(c, t, inProj) {
  const layers = [];
  for (let l = 0; l < c.numLayers; l++) layers.push(layerWeights(c, (name) => t[`layers.${l}.${name}`] ?? null, inProj));
  return {
    tokEmb: t['tok_emb.weight'], posEmb: t['pos_emb.weight'] ?? null,
    normF: { weight: t['ln_f.weight'], bias: t['ln_f.bias'] ?? null },
    lmHead: c.tied ? null : transposed(t['head.weight'], c.dModel), lmHeadBias: t['head.bias'] ?? null,
    layers,
  };
}

/**
 * The tokenizer of a model file, its vocabulary checked: `{type: 'characters'}` (one id per
 * character, vocab the one-character strings) or `{type: 'llama2c', pieces, scores}` (vocab the
 * byte-pair pieces as UTF-8 text, `__metadata__.scores` their merge scores).
 * @throws {MHAError} INVALID_ARGUMENT: vocab not vocabSize strings (one character each for a
 *   character model), scores missing or not JSON
 */
function tokenizerData(c, vocab, metadata) {
  if (c.tokenizer === 'characters') {
    if (!Array.isArray(vocab) || vocab.length !== c.vocabSize || !vocab.every((s) => typeof s === 'string' && Array.from(s).length === 1)) {
      throw invalid(`loadModel: __metadata__.vocab must be an array of ${c.vocabSize} one-character strings`);
    }
    return { type: 'characters' };
  }
  if (!Array.isArray(vocab) || vocab.length !== c.vocabSize || !vocab.every((s) => typeof s === 'string')) {
    throw invalid(`loadModel: __metadata__.vocab must be an array of ${c.vocabSize} strings (the tokenizer's pieces)`);
  }
  const enc = new TextEncoder();
  return { type: 'llama2c', pieces: vocab.map((p) => enc.encode(p)), scores: metadataJSON(metadata, 'scores') };
}

/**
 * Whether readModel reads a folder with this reader: any one file (tried after llama2c.js).
 * @param {import('./sources.js').ModelFolder} folder
 * @returns {Promise<boolean>}
 */
export async function detect(folder) {
  return folder.main !== null;
}

/**
 * Reads this project's model file: the config, the vocabulary and tokenizer, the core decoder's
 * weights, and the training record and probe texts of its metadata.
 * @param {import('./sources.js').ModelFolder} folder a folder of one file (`main`)
 * @returns {Promise<{config: object, vocab: string[], tokenizer: object, weights: object,
 *   metadata: Object<string, string>, training: object, probes: object|null}>}
 * @throws {MHAError} as parseSafetensors, readCharlmConfig and checkTensors; INVALID_ARGUMENT for a
 *   vocabulary or scores that do not fit the config
 */
export async function read(folder) {
  const { metadata, tensors } = parseSafetensors(await folder.read(folder.main));
  const config = readCharlmConfig(metadata);
  const vocab = metadataJSON(metadata, 'vocab');
  const tokenizer = tokenizerData(config, vocab, metadata);
  const inProj = config.kvHeads === config.numHeads && tensors['layers.0.attn.in_proj_weight'] !== undefined;
  checkTensors(tensors, charlmShapes(config, inProj));
  const data = Object.fromEntries(Object.entries(tensors).map(([k, v]) => [k, v.data]));
  return {
    config, vocab, tokenizer, metadata, weights: charlmDecoderWeights(config, data, inProj),
    training: metadata.training ? metadataJSON(metadata, 'training') : {},
    probes: metadata.probes ? metadataJSON(metadata, 'probes') : null,
  };
}
