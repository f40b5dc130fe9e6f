/**
 * GPT-2 (a GPT2LMHeadModel state dict, float32) as an ONNX model with past keys and values, for
 * onnxruntime-web: the whole-model peer of gpt2-peer.mjs. Built with the `onnx` protobuf schema of
 * the `onnx-proto` package, as onnx-graph.mjs builds the one-layer peer.
 *
 * Inputs: `input_ids` [1, S] int64, `position_ids` [1, S] int64, and per layer l the cache of the
 * earlier P tokens; outputs: `logits` [1, V] of the LAST position only (the head is applied to one
 * row, as our generator does) and per layer the cache of P + S tokens. Three attention styles, as
 * in onnx-graph.mjs:
 *  - 'torch': what an export of Hugging Face's GPT-2 is made of: Concat of the past K/V,
 *    MatMul, Add of the additive causal mask (input `mask` [1, 1, S, P + S]), Softmax, MatMul;
 *    cache `past_key_l` / `past_value_l` [1, h, P, d_k] → `present_key_l` / `present_value_l`;
 *  - 'mha': com.microsoft.MultiHeadAttention with past_key / past_value (same cache tensors) and
 *    `unidirectional`;
 *  - 'attn': com.microsoft.Attention (fused QKV projection) with its combined `past_l`
 *    [2, 1, h, P, d_k] → `present_l` and `unidirectional`.
 * Each block: LayerNormalization (opset 17), the QKV MatMul + Add, attention, c_proj, the residual,
 * LayerNormalization, c_fc MatMul, com.microsoft.FastGelu with its bias (the tanh GELU GPT-2 uses,
 * as ORT's own optimizer fuses it), c_proj, the residual. Then the last position is sliced, the
 * final LayerNormalization applied and the tied head is a Gemm with transB over the token
 * embedding itself (one copy of it, as in our core). The score scale 1/√d_k is folded into W_Q and
 * b_Q (the same model; it saves the peer a Mul). Every simplification errs in the peer's favour.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const AT = onnx.AttributeProto.AttributeType;

const f32Init = (name, dims, arr) => ({ name, dims, dataType: FLOAT, rawData: new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength) });
const i64Init = (name, values) => ({ name, dims: [values.length], dataType: INT64, rawData: new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer) });
const dimsOf = (dims) => ({ dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) });
const vi = (name, dims, elemType = FLOAT) => ({ name, type: { tensorType: { elemType, shape: dimsOf(dims) } } });
const aInt = (name, i) => ({ name, type: AT.INT, i });
const aInts = (name, ints) => ({ name, type: AT.INTS, ints });
const aFloat = (name, f) => ({ name, type: AT.FLOAT, f });

/** The graph styles this builds. */
export const GPT2_STYLES = ['torch', 'mha', 'attn'];

/**
 * @param {{n_layer: number, n_head: number, n_embd: number, vocab_size: number, layer_norm_epsilon: number}} config
 * @param {Map<string, {shape: number[], data: Float32Array}>} t the state dict (gpt2-model.mjs readF32Tensors)
 * @param {'torch'|'mha'|'attn'} style
 * @returns {Uint8Array} the serialized ModelProto
 */
export function buildGpt2Onnx(config, t, style) {
  if (!GPT2_STYLES.includes(style)) throw new Error(`unknown GPT-2 graph style ${style}`);
  const { n_layer: L, n_head: h, n_embd: d, vocab_size: V, layer_norm_epsilon: eps } = config;
  const dk = d / h, scale = 1 / Math.sqrt(dk);
  const get = (name) => { const x = t.get(name); if (!x) throw new Error(`missing tensor ${name}`); return x.data; };
  const nodes = [], inits = [], inputs = [vi('input_ids', [1, 'S'], INT64), vi('position_ids', [1, 'S'], INT64)], outputs = [vi('logits', [1, V])];
  const node = (opType, input, output, attribute = [], domain = '') => nodes.push({ opType, input, output, attribute, domain, name: `${opType}_${nodes.length}` });
  if (style === 'torch') inputs.push(vi('mask', [1, 1, 'S', 'T']));

  inits.push(f32Init('wte', [V, d], get('wte.weight')), f32Init('wpe', [get('wpe.weight').length / d, d], get('wpe.weight')));
  inits.push(i64Init('split3', [d, d, d]), i64Init('shHeads', [0, -1, h, dk]), i64Init('shModel', [0, -1, d]));
  node('Gather', ['wte', 'input_ids'], ['tok'], [aInt('axis', 0)]);
  node('Gather', ['wpe', 'position_ids'], ['pos'], [aInt('axis', 0)]);
  node('Add', ['tok', 'pos'], ['x0']);
  let x = 'x0';
  for (let l = 0; l < L; l++) {
    const p = `h.${l}.`, n = (s) => `l${l}_${s}`;
    const wqkv = get(`${p}attn.c_attn.weight`).slice(), bqkv = get(`${p}attn.c_attn.bias`).slice();
    for (let r = 0; r < d; r++) for (let c = 0; c < d; c++) wqkv[r * 3 * d + c] *= scale;
    for (let c = 0; c < d; c++) bqkv[c] *= scale;
    inits.push(f32Init(n('ln1g'), [d], get(`${p}ln_1.weight`)), f32Init(n('ln1b'), [d], get(`${p}ln_1.bias`)),
      ...(style === 'mha' ? [] : [f32Init(n('wqkv'), [d, 3 * d], wqkv)]), f32Init(n('bqkv'), [3 * d], bqkv),
      f32Init(n('wo'), [d, d], get(`${p}attn.c_proj.weight`)), f32Init(n('bo'), [d], get(`${p}attn.c_proj.bias`)),
      f32Init(n('ln2g'), [d], get(`${p}ln_2.weight`)), f32Init(n('ln2b'), [d], get(`${p}ln_2.bias`)),
      f32Init(n('wfc'), [d, 4 * d], get(`${p}mlp.c_fc.weight`)), f32Init(n('bfc'), [4 * d], get(`${p}mlp.c_fc.bias`)),
      f32Init(n('wpr'), [4 * d, d], get(`${p}mlp.c_proj.weight`)), f32Init(n('bpr'), [d], get(`${p}mlp.c_proj.bias`)));
    node('LayerNormalization', [x, n('ln1g'), n('ln1b')], [n('ln1')], [aInt('axis', -1), aFloat('epsilon', eps)]);
    addAttention({ node, inits, inputs, outputs }, style, l, n, wqkv, { h, d, dk });
    node('MatMul', [n('o'), n('wo')], [n('a0')]);
    node('Add', [n('a0'), n('bo')], [n('a')]);
    node('Add', [x, n('a')], [n('x1')]);
    node('LayerNormalization', [n('x1'), n('ln2g'), n('ln2b')], [n('ln2')], [aInt('axis', -1), aFloat('epsilon', eps)]);
    node('MatMul', [n('ln2'), n('wfc')], [n('f0')]);
    node('FastGelu', [n('f0'), n('bfc')], [n('f1')], [], 'com.microsoft');
    node('MatMul', [n('f1'), n('wpr')], [n('m0')]);
    node('Add', [n('m0'), n('bpr')], [n('m')]);
    node('Add', [n('x1'), n('m')], [n('x2')]);
    x = n('x2');
  }
  inits.push(f32Init('lnfg', [d], get('ln_f.weight')), f32Init('lnfb', [d], get('ln_f.bias')),
    i64Init('lastStart', [-1]), i64Init('lastEnd', [2 ** 62]), i64Init('lastAxis', [1]), i64Init('sh2', [1, d]));
  node('Slice', [x, 'lastStart', 'lastEnd', 'lastAxis'], ['xl']);
  node('Reshape', ['xl', 'sh2'], ['xl2']);
  node('LayerNormalization', ['xl2', 'lnfg', 'lnfb'], ['xf'], [aInt('axis', -1), aFloat('epsilon', eps)]);
  node('Gemm', ['xf', 'wte'], ['logits'], [aInt('transB', 1)]);
  const model = onnx.ModelProto.fromObject({
    irVersion: 8, producerName: 'mha-wasm bench (gpt2)',
    opsetImport: [{ domain: '', version: 17 }, { domain: 'com.microsoft', version: 1 }],
    graph: { name: `gpt2_${style}`, node: nodes, initializer: inits, input: inputs, output: outputs },
  });
  return onnx.ModelProto.encode(model).finish();
}

/**
 * One block's attention on `n('ln1')` into `n('o')` [1, S, d], with its cache inputs and outputs,
 * in the graph style `style`.
 */
function addAttention({ node, inits, inputs, outputs }, style, l, n, wqkv, { h, d, dk }) {
  if (style === 'attn') {
    inputs.push(vi(`past_${l}`, [2, 1, h, 'P', dk]));
    outputs.push(vi(`present_${l}`, [2, 1, h, 'T', dk]));
    node('Attention', [n('ln1'), n('wqkv'), n('bqkv'), '', `past_${l}`], [n('o'), `present_${l}`],
      [aInt('num_heads', h), aInt('unidirectional', 1), aFloat('scale', 1)], 'com.microsoft');
  } else {
    inputs.push(vi(`past_key_${l}`, [1, h, 'P', dk]), vi(`past_value_${l}`, [1, h, 'P', dk]));
    outputs.push(vi(`present_key_${l}`, [1, h, 'T', dk]), vi(`present_value_${l}`, [1, h, 'T', dk]));
    if (style === 'mha') {
      inits.push(f32Init(n('wq'), [d, d], cols(wqkv, d, 3 * d, 0, d)), f32Init(n('wk'), [d, d], cols(wqkv, d, 3 * d, d, d)),
        f32Init(n('wv'), [d, d], cols(wqkv, d, 3 * d, 2 * d, d)));
      node('MatMul', [n('ln1'), n('wq')], [n('q')]);
      node('MatMul', [n('ln1'), n('wk')], [n('k')]);
      node('MatMul', [n('ln1'), n('wv')], [n('v')]);
      node('MultiHeadAttention', [n('q'), n('k'), n('v'), n('bqkv'), '', '', `past_key_${l}`, `past_value_${l}`],
        [n('o'), `present_key_${l}`, `present_value_${l}`], [aInt('num_heads', h), aInt('unidirectional', 1), aFloat('scale', 1)], 'com.microsoft');
    } else {
      node('MatMul', [n('ln1'), n('wqkv')], [n('qkv0')]);
      node('Add', [n('qkv0'), n('bqkv')], [n('qkv')]);
      node('Split', [n('qkv'), 'split3'], [n('q0'), n('k0'), n('v0')], [aInt('axis', 2)]);
      for (const s of ['q', 'k', 'v']) {
        node('Reshape', [n(`${s}0`), 'shHeads'], [n(`${s}1`)]);
        node('Transpose', [n(`${s}1`)], [n(`${s}`)], [aInts('perm', [0, 2, 1, 3])]);   // [1, h, S, dk]
      }
      node('Concat', [`past_key_${l}`, n('k')], [`present_key_${l}`], [aInt('axis', 2)]);
      node('Concat', [`past_value_${l}`, n('v')], [`present_value_${l}`], [aInt('axis', 2)]);
      node('Transpose', [`present_key_${l}`], [n('kt')], [aInts('perm', [0, 1, 3, 2])]);   // [1, h, dk, T]
      node('MatMul', [n('q'), n('kt')], [n('s0')]);
      node('Add', [n('s0'), 'mask'], [n('s1')]);
      node('Softmax', [n('s1')], [n('w')], [aInt('axis', -1)]);
      node('MatMul', [n('w'), `present_value_${l}`], [n('o0')]);   // [1, h, S, dk]
      node('Transpose', [n('o0')], [n('o1')], [aInts('perm', [0, 2, 1, 3])]);
      node('Reshape', [n('o1'), 'shModel'], [n('o')]);
    }
  }
}

/** Columns [c0, c0 + w) of a row-major rows × total matrix. */
function cols(m, rows, total, c0, w) {
  const out = new Float32Array(rows * w);
  for (let r = 0; r < rows; r++) out.set(m.subarray(r * total + c0, r * total + c0 + w), r * w);
  return out;
}
