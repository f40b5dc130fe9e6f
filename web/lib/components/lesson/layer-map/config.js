// The attributes of <mha-layer-map> read through base/attr-check.js's parsers (the error contract
// of every element): one MHAError per bad attribute, naming it, what it expects and what it got.
import { intAttr, attrError } from '../../base/attr-check.js';
import { divisorsText } from '../../logic/layer-map.js';

/** An optional size: left out (null, undefined or '') is absent. */
const optional = (raw) => (raw === '' ? null : raw);

/**
 * The map's configuration from the raw attribute values, or the errors (each naming the attribute,
 * what it expects and what it got). Sizes are whole numbers ≥ 1; heads must divide d-model and
 * kv-heads must divide heads (checked only when heads divides d-model: one message, not two).
 * @param {{seqLen?: unknown, dModel?: unknown, heads?: unknown, batch?: unknown, kvHeads?: unknown}} raw
 *   the attributes as written (null/undefined: left out; '' also for the optional batch and kv-heads)
 * @returns {{cfg?: {seqLen: number, dModel: number, numHeads: number, batch?: number, kvHeads?: number},
 *   errors: import('../../../src/index.js').MHAError[], problems: string[]}} `cfg` when there is no error;
 *   `problems` are the errors' messages
 */
export function layerMapConfig({ seqLen, dModel, heads, batch, kvHeads }) {
  const T = intAttr('seq-len', seqLen, { dflt: 5, min: 1, what: 'tokens T' });
  const d = intAttr('d-model', dModel, { dflt: 24, min: 1, what: 'the model width d_model' });
  const h = intAttr('heads', heads, { dflt: 2, min: 1, what: 'num_heads h' });
  const B = intAttr('batch', optional(batch), { dflt: undefined, min: 1, what: 'batch size B, or leave it out for an unbatched input' });
  const g = intAttr('kv-heads', optional(kvHeads), { dflt: undefined, min: 1, what: 'key/value heads g, or leave it out for g = h' });
  const errors = [T, d, h, B, g].filter((r) => r.error).map((r) => r.error);
  if (d.value && h.value && d.value % h.value !== 0) {
    errors.push(attrError('heads', `a divisor of d-model = ${d.value} (${divisorsText(d.value)}) so that d_k = d_model / h is whole`, heads));
  }
  if (h.value && g.value && !(d.value && d.value % h.value) && h.value % g.value !== 0) {
    errors.push(attrError('kv-heads', `a divisor of heads = ${h.value} (${divisorsText(h.value)})`, kvHeads));
  }
  const problems = errors.map((e) => e.message);
  if (errors.length) return { errors, problems };
  const cfg = { seqLen: T.value, dModel: d.value, numHeads: h.value };
  if (B.value !== undefined) cfg.batch = B.value;
  if (g.value !== undefined) cfg.kvHeads = g.value;
  return { cfg, errors, problems };
}
