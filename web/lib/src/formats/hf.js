/**
 * Hugging Face model folders as they are published: `config.json` (hf-config.js), the tensors of
 * `model.safetensors` (or of the shards a `model.safetensors.index.json` names) and the tokenizer
 * files, mapped onto the core's decoder (docs/trained-models.md, "Architecture options") — no new
 * math. The names of each family's tensors and where each goes sit in one table, TENSORS, as
 * nanoGPT's `from_pretrained` keeps its mapping. `detect` and `read` are this format's part of
 * readModel (index.js).
 *
 * Families (from `config.json`'s `architectures`, else `model_type`):
 * - `GPT2LMHeadModel` (Radford et al. 2019; transformers' modeling_gpt2.py): LayerNorm
 *   (`layer_norm_epsilon`), learned positions (`wpe`, `n_positions`), `c_attn` packing Q|K|V,
 *   `Conv1D` weights stored [in, out] (already the core's layout), GELU (`activation_function`
 *   "gelu_new" = the tanh form), biases on every linear map, `lm_head` tied to `wte`.
 * - `LlamaForCausalLM` (Touvron et al. 2023; modeling_llama.py; TinyLlama, SmolLM and kin): RMSNorm
 *   (`rms_norm_eps`), SwiGLU (`hidden_act` "silu"), RoPE with `rope_theta` on the halves layout
 *   (`rotate_half`: pairs (x[i], x[i + d_k/2])), grouped-query K/V (`num_key_value_heads`),
 *   `tie_word_embeddings`, optional `attention_bias` / `mlp_bias`; `nn.Linear` weights [out, in],
 *   transposed here.
 * Every file is untrusted: its size is checked before it is read (HF_LIMITS), every tensor's shape
 * and values before it is used, and each error is an MHAError naming the file. The safetensors
 * files are read by ranges (safetensors.js openSafetensors): their headers, then the weights
 * outside the transformer blocks, then one block at a time as the model is built, so that a large
 * model's file is never whole in memory.
 * @module hf
 */
import { MHAError } from '../engine/errors.js';
import { transposed, columns } from './matrices.js';
import { openSafetensors } from './safetensors.js';
import { halfToNumber, bfloat16ToNumber, widen16, MATRIX_FIELDS } from './half.js';
import { HF_LIMITS, parseJSONFile, hfConfig, hfShardIndex } from './hf-config.js';
import { hfTokenizer } from './hf-tokenizer.js';

export { HF_LIMITS };

const invalid = (msg) => new MHAError('INVALID_ARGUMENT', `loadModel: ${msg}`);

/**
 * Every tensor of each family's state dict: [name (in a layer, after `prefix(l)`), shape from the
 * config c, the field of the core decoder's weights it fills (decoder.js: `tokEmb`, `normF.weight`
 * …; in a layer `wQ`, `norm1.bias` …), how: 'T' transposes nn.Linear's [out, in] into the core's
 * [in, out], 'qkv' cuts GPT-2's packed c_attn (Conv1D [d, 3d], its bias [3d]) into Q | K | V,
 * else the tensor is taken as it is; when(c): the tensor is there only for such configs].
 * `strip`: a prefix some files add to every name; `buffers`: stored names that are not weights
 * (GPT-2's causal-mask `attn.bias` / `attn.masked_bias`, Llama's `rotary_emb.inv_freq`).
 */
const TENSORS = {
  gpt2: {
    arch: 'GPT2LMHeadModel', strip: 'transformer.', buffers: /^h\.\d+\.attn\.(bias|masked_bias)$/, prefix: (l) => `h.${l}.`,
    model: [
      ['wte.weight', (c) => [c.vocabSize, c.dModel], 'tokEmb'],
      ['wpe.weight', (c) => [c.context, c.dModel], 'posEmb'],
      ['ln_f.weight', (c) => [c.dModel], 'normF.weight'],
      ['ln_f.bias', (c) => [c.dModel], 'normF.bias'],
      ['lm_head.weight', (c) => [c.vocabSize, c.dModel], 'lmHead', 'T', (c) => !c.tied],
    ],
    layer: [
      ['ln_1.weight', (c) => [c.dModel], 'norm1.weight'], ['ln_1.bias', (c) => [c.dModel], 'norm1.bias'],
      ['ln_2.weight', (c) => [c.dModel], 'norm2.weight'], ['ln_2.bias', (c) => [c.dModel], 'norm2.bias'],
      ['attn.c_attn.weight', (c) => [c.dModel, 3 * c.dModel], 'wQ wK wV', 'qkv'],
      ['attn.c_attn.bias', (c) => [3 * c.dModel], 'bQ bK bV', 'qkv'],
      ['attn.c_proj.weight', (c) => [c.dModel, c.dModel], 'wO'], ['attn.c_proj.bias', (c) => [c.dModel], 'bO'],
      ['mlp.c_fc.weight', (c) => [c.dModel, c.dFF], 'wFc'], ['mlp.c_fc.bias', (c) => [c.dFF], 'bFc'],
      ['mlp.c_proj.weight', (c) => [c.dFF, c.dModel], 'wProj'], ['mlp.c_proj.bias', (c) => [c.dModel], 'bProj'],
    ],
  },
  llama: {
    arch: 'LlamaForCausalLM', strip: null, buffers: /\.rotary_emb\.inv_freq$/, prefix: (l) => `model.layers.${l}.`,
    model: [
      ['model.embed_tokens.weight', (c) => [c.vocabSize, c.dModel], 'tokEmb'],
      ['model.norm.weight', (c) => [c.dModel], 'normF.weight'],
      ['lm_head.weight', (c) => [c.vocabSize, c.dModel], 'lmHead', 'T', (c) => !c.tied],
    ],
    layer: [
      ['input_layernorm.weight', (c) => [c.dModel], 'norm1.weight'],
      ['post_attention_layernorm.weight', (c) => [c.dModel], 'norm2.weight'],
      ...linear('self_attn.q_proj', 'Q', (c) => c.dModel, (c) => c.dModel, (c) => c.attnBias),
      ...linear('self_attn.k_proj', 'K', (c) => c.kvHeads * c.dK, (c) => c.dModel, (c) => c.attnBias),
      ...linear('self_attn.v_proj', 'V', (c) => c.kvHeads * c.dK, (c) => c.dModel, (c) => c.attnBias),
      ...linear('self_attn.o_proj', 'O', (c) => c.dModel, (c) => c.dModel, (c) => c.attnBias),
      ...linear('mlp.gate_proj', 'Gate', (c) => c.dFF, (c) => c.dModel, (c) => c.bias),
      ...linear('mlp.up_proj', 'Up', (c) => c.dFF, (c) => c.dModel, (c) => c.bias),
      ...linear('mlp.down_proj', 'Proj', (c) => c.dModel, (c) => c.dFF, (c) => c.bias),
    ],
  },
};

/** An nn.Linear's entries: weight [out, in] → `w<field>` transposed, bias [out] → `b<field>` when bias(c). */
function linear(name, field, out, inn, bias) {
  return [[`${name}.weight`, (c) => [out(c), inn(c)], `w${field}`, 'T'], [`${name}.bias`, (c) => [out(c)], `b${field}`, null, bias]];
}

/**
 * name → {shape, to, how, layer} of every tensor a folder of this family and config holds, in
 * TENSORS' order (the model's, then each layer's).
 * @param {'gpt2'|'llama'} family
 * @param {object} c hfConfig().config
 * @returns {Map<string, {shape: number[], to: string, how: string|null, layer: number|null}>}
 */
function expectedTensors(family, c) {
  const T = TENSORS[family], out = new Map();
  const add = ([name, shape, to, how = null, when], layer, prefix = '') => {
    if (!when || when(c)) out.set(prefix + name, { shape: shape(c), to, how, layer });
  };
  for (const e of T.model) add(e, null);
  for (let l = 0; l < c.numLayers; l++) for (const e of T.layer) add(e, l, T.prefix(l));
  return out;
}

/** A stored tensor name in TENSORS' naming (a file's prefix stripped), or null for a buffer that is not a weight. */
function tensorName(family, stored) {
  const { strip, buffers } = TENSORS[family];
  const name = strip && stored.startsWith(strip) ? stored.slice(strip.length) : stored;
  return buffers.test(name) ? null : name;
}

/** One transformer block's weights with every field empty (null): a family fills the ones it has. */
function emptyLayer() {
  const norm = () => ({ weight: null, bias: null });
  return { norm1: norm(), norm2: norm(), wQ: null, wK: null, wV: null, bQ: null, bK: null, bV: null, wO: null, bO: null,
    wFc: null, bFc: null, wGate: null, bGate: null, wUp: null, bUp: null, wProj: null, bProj: null };
}

/** The core decoder's weights outside the blocks, every field empty (null); `layers` empty (the blocks come one by one). */
function emptyGlobals(c) {
  // the core's `bias` covers the MLP's maps and the output projection; neither family has a bias on the latter: zeros
  return { tokEmb: null, posEmb: null, normF: { weight: null, bias: null }, lmHead: null,
    lmHeadBias: c.bias ? new Float32Array(c.vocabSize) : null, layers: [] };
}

/**
 * Puts one tensor where the core decoder's weights (decoder.js: matrices row-major [in, out]) take
 * it, as TENSORS says: 'T' transposed, 'qkv' cut into Q | K | V, else as it is.
 * @param {object} into the globals (emptyGlobals) or one block (emptyLayer)
 * @param {{shape: number[], to: string, how: string|null}} spec the tensor's expectedTensors() entry
 * @param {Float32Array|Uint16Array} data its values, checked
 * @param {object} c hfConfig().config
 */
function place(into, { shape, to, how }, data, c) {
  const set = (field, v) => { const [a, b] = field.split('.'); if (b) into[a][b] = v; else into[a] = v; };
  if (how === 'T') set(to, transposed(data, shape[1]));
  else if (how === 'qkv') {
    const d = c.dModel;
    to.split(' ').forEach((field, i) => set(field, shape.length === 2 ? columns(data, d, 3 * d, i * d, d) : data.subarray(i * d, (i + 1) * d)));
  } else set(to, data);
}

/** The MHAError of a safetensors file of the folder, its message naming the file. */
function named(e, file) {
  if (e instanceof MHAError && e.message.startsWith('safetensors: ')) return new MHAError(e.code, `loadModel: ${file}: ${e.message}`);
  return e;
}

/** A safetensors file of the folder opened by ranges (safetensors.js openSafetensors): its header read. */
async function openShard(folder, file, optional = false) {
  try {
    const src = await openSafetensors(folder, file, { optional });
    return src && { ...src, file };
  } catch (e) {
    throw named(e, file);
  }
}

/**
 * The folder's weights files (model.safetensors, or the shards of its index) opened by ranges:
 * where each expected tensor is (its file and header entry), by TENSORS' names. No tensor's data
 * is read yet.
 * @returns {Promise<{where: Object<string, {src: object, e: object, stored: string}>, files: string[], opened: object[]}>}
 */
async function openTensors(folder, family, expected) {
  const where = {};
  const files = [], opened = [];
  const take = (src, only) => {
    opened.push(src);
    for (const [stored, e] of src.entries) {
      if (only && only.get(stored) !== src.file) continue;
      const name = tensorName(family, stored);
      if (name === null) continue;
      if (!expected.has(name)) {
        throw invalid(`${src.file}: tensor "${stored}" is not part of a ${TENSORS[family].arch} of this config.json (an option the config does not declare?)`);
      }
      where[name] = { src, e, stored };
    }
  };
  const single = await openShard(folder, 'model.safetensors', true);
  if (single) {
    files.push('model.safetensors');
    take(single);
    return { where, files, opened };
  }
  const F = 'model.safetensors.index.json';
  const ib = await folder.read(F, { maxBytes: HF_LIMITS.indexBytes, optional: true });
  if (!ib) throw invalid(`model.safetensors: missing in the model folder ${folder.name}, and no ${F} (PyTorch .bin weights are not read: convert them to safetensors)`);
  const { weightMap, shards } = hfShardIndex(parseJSONFile(ib, F, HF_LIMITS.indexBytes));
  files.push(F);
  for (const shard of shards) {
    const src = await openShard(folder, shard);
    files.push(shard);
    for (const [name, file] of weightMap) {
      if (file === shard && !src.entries.has(name)) throw invalid(`${shard}: tensor "${name}" is missing (${F} places it in this shard)`);
    }
    take(src, weightMap);
  }
  return { where, files, opened };
}

/**
 * Every expected tensor checked against the headers (present, of the config's shape) before any
 * data is read, and the 16-bit type kept: 16-bit tensors stay 16-bit (the core keeps 16-bit
 * matrices: loadModel's weightStorage); a folder mixing float16 and bfloat16 keeps the first type
 * met 16-bit and widens the other.
 * @returns {{fileType: 'float16'|'bfloat16'|null, matrices16: boolean}} matrices16: every matrix
 *   (MATRIX_FIELDS) is stored in fileType
 */
function checkHeaders(expected, where, files) {
  let fileType = null, matrices16 = true;
  for (const [name, { shape, to }] of expected) {
    const w = where[name];
    if (!w) throw invalid(`tensor "${name}" is missing from ${files.join(', ')} (expected shape [${shape.join(', ')}] for this config.json)`);
    const s = w.e.shape;
    if (s.length !== shape.length || s.some((v, i) => v !== shape[i])) {
      throw new MHAError('SHAPE_MISMATCH', `loadModel: ${w.src.file}: tensor "${w.stored}": expected shape [${shape.join(', ')}] for this config.json, got [${s.join(', ')}]`);
    }
    const type = w.e.dtype === 'BF16' ? 'bfloat16' : w.e.dtype === 'F16' ? 'float16' : null;
    if (type) fileType ??= type;
    if (MATRIX_FIELDS.includes(to.split(' ')[0])) matrices16 &&= type !== null && type === fileType;
  }
  return { fileType, matrices16 };
}

/** A tensor's values checked finite; a 16-bit one of the other 16-bit type than fileType widened. */
function checkedData(data, { src, e, stored }, fileType) {
  if (data instanceof Uint16Array) {
    const type = e.dtype === 'BF16' ? 'bfloat16' : 'float16';
    const m = type === 'bfloat16' ? 0x7f80 : 0x7c00;
    for (let i = 0; i < data.length; i++) {
      if ((data[i] & m) === m) {
        const v = type === 'bfloat16' ? bfloat16ToNumber(data[i]) : halfToNumber(data[i]);
        throw new MHAError('NON_FINITE', `loadModel: ${src.file}: tensor "${stored}" has ${v} at flat index ${i}`);
      }
    }
    return type === fileType ? data : widen16(data, type);
  }
  for (let i = 0; i < data.length; i++) {
    if (!Number.isFinite(data[i])) throw new MHAError('NON_FINITE', `loadModel: ${src.file}: tensor "${stored}" has ${data[i]} at flat index ${i}`);
  }
  return data;
}

/**
 * One part of the decoder's weights (the tensors outside the blocks, or one block's), read from
 * the files by ranges (the tensors of a part that lie together in a file in one read), checked and
 * placed into `into`.
 * @param {Array<[string, object]>} part [name, expectedTensors() entry] of the part's tensors
 */
async function readPart(part, where, fileType, c, into) {
  const bySrc = new Map();
  for (const [name] of part) {
    const { src } = where[name];
    if (!bySrc.has(src)) bySrc.set(src, []);
    bySrc.get(src).push(name);
  }
  const data = new Map();
  for (const [src, names] of bySrc) {
    let got;
    try {
      got = await src.read(names.map((n) => where[n].stored), true);
    } catch (e) {
      throw named(e, src.file);
    }
    for (const n of names) data.set(n, got.get(where[n].stored));
  }
  for (const [name, spec] of part) place(into, spec, checkedData(data.get(name), where[name], fileType), c);
  return into;
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
  const pair = 'a GPT-2 tokenizer is vocab.json and merges.txt together (or one tokenizer.json)';
  const vocabJson = await readIfThere(folder, 'vocab.json', maxBytes);
  if (!vocabJson) {
    if (folder.files?.includes('merges.txt')) {
      throw invalid(`vocab.json: missing in the model folder ${folder.name} (${folder.absent('vocab.json')}), which has merges.txt: ${pair}`);
    }
    return null;
  }
  const mergesTxt = await readIfThere(folder, 'merges.txt', maxBytes);
  if (!mergesTxt) throw invalid(`merges.txt: missing in the model folder ${folder.name} (${folder.absent('merges.txt')}), which has vocab.json: ${pair}`);
  return { vocabJson, mergesTxt };
}

/**
 * The tokenizer files of a folder, as hfTokenizer() takes them, or null when it has none. A folder
 * that lists its files is read without asking for absent ones; a URL folder is asked in the order
 * its family ships them (GPT-2: vocab.json + merges.txt; Llama: tokenizer.json and
 * tokenizer_config.json), so that a folder as published gets no 404.
 */
async function tokenizerFiles(folder, family) {
  const maxBytes = HF_LIMITS.tokenizerBytes;
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
 * The folder's tokenizer (tokenizer.json, or GPT-2's vocab.json + merges.txt; tokenizer_config.json
 * when present) as hf-tokenizer.js's, or null when it has no tokenizer files.
 * @throws {MHAError} INVALID_ARGUMENT (each message begins "loadModel: " and names the file): one
 *   of vocab.json and merges.txt without the other, a tokenizer file hfTokenizer refuses, ids
 *   beyond vocab_size
 */
async function readTokenizer(folder, vocabSize, family) {
  const files = await tokenizerFiles(folder, family);
  if (!files) return null;
  let tok;
  try {
    tok = await hfTokenizer(files);
  } catch (e) {
    if (e instanceof MHAError && !e.message.startsWith('loadModel: ')) throw new MHAError(e.code, `loadModel: ${e.message}`);
    throw e;
  }
  if (tok.vocabSize > vocabSize) {
    throw invalid(`${files.tokenizerJson ? 'tokenizer.json' : 'vocab.json'}: the tokenizer has ids up to ${tok.vocabSize - 1}, beyond the model's vocab_size ${vocabSize} in config.json`);
  }
  return tok;
}

/**
 * Whether readModel reads a folder with this reader: a folder of files, not one model file.
 * @param {import('./sources.js').ModelFolder} folder
 * @returns {Promise<boolean>}
 */
export async function detect(folder) {
  return folder.main === null;
}

/**
 * Reads a Hugging Face model folder: config.json, the headers of the weights (model.safetensors or
 * the shards of model.safetensors.index.json) checked against the config, the weights outside the
 * transformer blocks, and the tokenizer files when there; the blocks' weights are read one block at
 * a time as `blocks` is iterated (each file by ranges: the bytes of one block at a time in memory).
 * @param {import('./sources.js').ModelFolder} folder
 * @returns {Promise<{config: object, tokenizer: object, weights: object, blocks: AsyncIterable<object>,
 *   fileType: 'float16'|'bfloat16'|null, matrices16: boolean, training: object}>} config:
 *   LanguageModel.config's fields with family 'gpt2' or 'llama'; tokenizer `{type: 'hf', tokenizer}`
 *   (hf-tokenizer.js's) or `{type: 'none', why}`; weights: the core decoder's outside the blocks
 *   (`layers` empty); blocks: each transformer block's weights in order (decoder.js's
 *   `weights.layers[l]`), read when asked; float16 or bfloat16 tensors as Uint16Arrays of fileType
 *   (formats/half.js then sets what the core holds); matrices16: every matrix is of fileType
 * @throws {MHAError} INVALID_ARGUMENT (a missing or malformed file, a refused config, a missing or
 *   unexpected tensor, a tokenizer file refused), SHAPE_MISMATCH (a tensor's shape), NON_FINITE (a
 *   NaN/Inf weight, from `blocks` for a block's): each message names the file and the key or tensor
 */
export async function read(folder) {
  const cfgBytes = await folder.read('config.json', { maxBytes: HF_LIMITS.configBytes, optional: true });
  if (!cfgBytes) {
    throw invalid(`config.json: missing in the model folder ${folder.name} (${folder.absent?.('config.json') ?? 'absent'}; ` +
      'a Hugging Face model folder holds config.json and model.safetensors)');
  }
  const { family, config: c, hf } = hfConfig(parseJSONFile(cfgBytes, 'config.json', HF_LIMITS.configBytes));
  const expected = expectedTensors(family, c);
  const { where, files, opened } = await openTensors(folder, family, expected);
  const { fileType, matrices16 } = checkHeaders(expected, where, files);
  const parts = Array.from({ length: c.numLayers + 1 }, () => []);   // the globals, then each block
  for (const entry of expected) parts[entry[1].layer === null ? 0 : entry[1].layer + 1].push(entry);
  const weights = await readPart(parts[0], where, fileType, c, emptyGlobals(c));
  const tok = await readTokenizer(folder, c.vocabSize, family);
  async function* blocks() {
    for (let l = 1; l <= c.numLayers; l++) yield await readPart(parts[l], where, fileType, c, emptyLayer());
    for (const src of opened) src.done();
  }
  const config = { ...c, family, tokenizer: tok ? 'hf' : 'none', unk: null,
    bos: hf.bos_token_id ?? tok?.bos ?? null, eos: hf.eos_token_id ?? tok?.eos ?? null };
  return {
    config, weights, blocks: blocks(), fileType, matrices16,
    tokenizer: tok ? { type: 'hf', tokenizer: tok } : { type: 'none', why: 'the model folder has no tokenizer.json (nor vocab.json + merges.txt)' },
    training: { source: `Hugging Face model folder ${folder.name}`, files: ['config.json', ...files] },
  };
}
