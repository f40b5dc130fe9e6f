/**
 * Builds the benchmark's multi-head attention layer as an ONNX model (bytes), from the packed
 * weights of our convention (y = x·W + b, W stored [in, out]), with the `onnx` protobuf schema of
 * the `onnx-proto` package. Two graph styles:
 *
 *  - 'torch':  what torch.onnx.export makes of nn.MultiheadAttention — one fused QKV MatMul + Add,
 *              Split, Reshape/Transpose to heads, MatMul, (Add causal mask), Softmax, MatMul,
 *              Transpose/Reshape, MatMul + Add for W_O. Can output the attention weights [h, T, T].
 *  - 'mha':    com.microsoft.MultiHeadAttention (ORT contrib op) on the projected Q, K, V with its
 *              packed QKV bias, `unidirectional` for causal; then MatMul + Add for W_O. No weights
 *              output. On CPU this op has a flash-attention path (MLAS) when not causal.
 *  - 'attn':   com.microsoft.Attention (ORT contrib op): the fused QKV projection and attention in
 *              one op (`unidirectional` for causal); then MatMul + Add for W_O. No weights output.
 *
 * The score scale 1/√d_k is folded into W_Q and b_Q (mathematically the same layer; it saves the
 * peer a Mul over Q, so the comparison errs in the peer's favour).
 * Input 'x' is [1, T, d_model]; outputs 'y' [1, T, d_model] and, for 'torch' with weights,
 * 'w' [1, h, T, T].
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

function f32Init(name, dims, data) {
  const arr = data instanceof Float32Array ? data : Float32Array.from(data);
  return { name, dims, dataType: FLOAT, rawData: new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength) };
}
function i64Init(name, values) {
  const arr = BigInt64Array.from(values.map(BigInt));
  return { name, dims: [values.length], dataType: INT64, rawData: new Uint8Array(arr.buffer) };
}
function valueInfo(name, dims) {
  return { name, type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } } };
}
const attrInt = (name, i) => ({ name, type: onnx.AttributeProto.AttributeType.INT, i });
const attrInts = (name, ints) => ({ name, type: onnx.AttributeProto.AttributeType.INTS, ints });
const attrFloat = (name, f) => ({ name, type: onnx.AttributeProto.AttributeType.FLOAT, f });

/** [in, out] column-concatenation of row-major matrices with the same number of rows. */
function concatCols(rows, mats) {
  const widths = mats.map((m) => m.length / rows);
  const total = widths.reduce((a, b) => a + b, 0);
  const out = new Float32Array(rows * total);
  for (let r = 0; r < rows; r++) {
    let off = 0;
    for (let i = 0; i < mats.length; i++) {
      out.set(mats[i].subarray(r * widths[i], (r + 1) * widths[i]), r * total + off);
      off += widths[i];
    }
  }
  return out;
}

/**
 * @param {{T: number, d: number, h: number, causal: boolean, needWeights: boolean,
 *          style: 'torch'|'mha'|'attn', w: {wQ, wK, wV, wO, bQ, bK, bV, bO: Float32Array}}} o
 * @returns {Uint8Array} the serialized ModelProto
 */
export function buildMhaOnnx({ T, d, h, causal, needWeights, style, w }) {
  const dk = d / h;
  const scale = 1 / Math.sqrt(dk);
  const wQs = w.wQ.map((x) => x * scale), bQs = w.bQ.map((x) => x * scale);
  const nodes = [];
  const inits = [];
  const outputs = [valueInfo('y', [1, T, d])];
  const node = (opType, input, output, attribute = [], domain = '') => nodes.push({ opType, input, output, attribute, domain, name: `${opType}_${nodes.length}` });

  inits.push(f32Init('wO', [d, d], w.wO), f32Init('bO', [d], w.bO));
  if (style === 'torch') {
    inits.push(f32Init('wQKV', [d, 3 * d], concatCols(d, [wQs, w.wK, w.wV])));
    inits.push(f32Init('bQKV', [3 * d], Float32Array.from([...bQs, ...w.bK, ...w.bV])));
    inits.push(i64Init('split3', [d, d, d]), i64Init('shHeads', [1, T, h, dk]), i64Init('shOut', [1, T, d]));
    node('MatMul', ['x', 'wQKV'], ['qkv0']);
    node('Add', ['qkv0', 'bQKV'], ['qkv']);
    node('Split', ['qkv', 'split3'], ['q0', 'k0', 'v0'], [attrInt('axis', 2)]);
    node('Reshape', ['q0', 'shHeads'], ['q1']);
    node('Reshape', ['k0', 'shHeads'], ['k1']);
    node('Reshape', ['v0', 'shHeads'], ['v1']);
    node('Transpose', ['q1'], ['q'], [attrInts('perm', [0, 2, 1, 3])]);   // [1, h, T, dk]
    node('Transpose', ['k1'], ['kt'], [attrInts('perm', [0, 2, 3, 1])]);  // [1, h, dk, T]
    node('Transpose', ['v1'], ['v'], [attrInts('perm', [0, 2, 1, 3])]);   // [1, h, T, dk]
    node('MatMul', ['q', 'kt'], ['s0']);                                  // [1, h, T, T]
    let s = 's0';
    if (causal) {
      const m = new Float32Array(T * T);
      for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) m[i * T + j] = -Infinity;
      inits.push(f32Init('causalMask', [T, T], m));
      node('Add', ['s0', 'causalMask'], ['s1']);
      s = 's1';
    }
    node('Softmax', [s], ['w'], [attrInt('axis', -1)]);
    node('MatMul', ['w', 'v'], ['o0']);                                   // [1, h, T, dk]
    node('Transpose', ['o0'], ['o1'], [attrInts('perm', [0, 2, 1, 3])]);  // [1, T, h, dk]
    node('Reshape', ['o1', 'shOut'], ['o']);
    if (needWeights) outputs.push(valueInfo('w', [1, h, T, T]));
  } else if (style === 'mha') {
    if (needWeights) throw new Error("style 'mha' has no attention-weights output");
    inits.push(f32Init('wQ', [d, d], wQs), f32Init('wK', [d, d], w.wK), f32Init('wV', [d, d], w.wV));
    inits.push(f32Init('bQKV', [3 * d], Float32Array.from([...bQs, ...w.bK, ...w.bV])));
    node('MatMul', ['x', 'wQ'], ['q']);
    node('MatMul', ['x', 'wK'], ['k']);
    node('MatMul', ['x', 'wV'], ['v']);
    const attrs = [attrInt('num_heads', h), attrFloat('scale', 1)];
    if (causal) attrs.push(attrInt('unidirectional', 1));
    node('MultiHeadAttention', ['q', 'k', 'v', 'bQKV'], ['o'], attrs, 'com.microsoft');
  } else if (style === 'attn') {
    if (needWeights) throw new Error("style 'attn' has no attention-weights output");
    inits.push(f32Init('wQKV', [d, 3 * d], concatCols(d, [wQs, w.wK, w.wV])));
    inits.push(f32Init('bQKV', [3 * d], Float32Array.from([...bQs, ...w.bK, ...w.bV])));
    const attrs = [attrInt('num_heads', h), attrFloat('scale', 1)];
    if (causal) attrs.push(attrInt('unidirectional', 1));
    node('Attention', ['x', 'wQKV', 'bQKV'], ['o'], attrs, 'com.microsoft');
  } else {
    throw new Error(`unknown ONNX graph style ${style}`);
  }
  node('MatMul', ['o', 'wO'], ['y0']);
  node('Add', ['y0', 'bO'], ['y']);

  const model = onnx.ModelProto.fromObject({
    irVersion: 8,
    producerName: 'mha-wasm bench',
    opsetImport: [{ domain: '', version: 17 }, { domain: 'com.microsoft', version: 1 }],
    graph: {
      name: `mha_${style}`,
      node: nodes,
      initializer: inits,
      input: [valueInfo('x', [1, T, d])],
      output: outputs,
    },
  });
  return onnx.ModelProto.encode(model).finish();
}
