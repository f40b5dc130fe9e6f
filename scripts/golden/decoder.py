#!/usr/bin/python3
"""Golden cases for the decoder models of the extended file format (docs/trained-models.md,
"Architecture options"), from a float64 PyTorch reference written from the papers and the doc,
independent of the engine, the JS runner and scripts/train/.

    /usr/bin/python3 scripts/golden/decoder.py

writes tests/golden-decoder/<name>.safetensors (tiny random models, float32 tensors, the format's
__metadata__) and tests/golden-decoder/<name>.json (the expectations). Deterministic: fixed seeds,
2 threads; running it again gives the same bytes. Needs only PyTorch (Debian's python3-torch, 1.13).

The reference forward, its formulas and sources: decoder_reference.py; the self-checks run before
anything is written (the default model against torch.nn, RoPE's formulations, GQA as MHA, each
option mattering, the float32 error): decoder_checks.py. This file holds the models, their weights,
the safetensors writer and reader, and the cases it writes.
"""
import json
import os
import struct

import torch

from decoder_checks import (check_default_against_torch, check_functions, check_gqa_as_mha, check_rope,
                            float32_error, sensitivity)
from decoder_reference import F64, UNK, VOCAB, arch, bits, encode, f32, forward, greedy

torch.set_num_threads(2)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'golden-decoder')
FORMAT = 'mha-wasm.charlm/1'
GEN_MARGIN = 1e-2   # greedy: the best log-probability beats the second by at least this

# name, seed, sizes, options (config keys beyond the base ones), attention form, texts, prompt.
# 'attn': 'in_proj' (torch.nn.MultiheadAttention's tensors) or 'qkv' (q_proj/k_proj/v_proj).
MODELS = [
    dict(name='default', seed=1, d=16, f=32, C=16, opts={}, attn='in_proj'),
    dict(name='llama', seed=2, d=32, f=48, C=24, attn='qkv',
         opts=dict(norm='rmsnorm', norm_eps=1e-6, mlp='swiglu', bias=False, positions='rope',
                   rope_interleaved=True, kv_heads=2, tied=True)),
    dict(name='neox-gelu', seed=3, d=24, f=48, C=20, attn='qkv', mlp_scale=2.0,
         opts=dict(norm='layernorm', mlp='gelu', bias=True, positions='rope', rope_base=500.0,
                   kv_heads=4)),
    dict(name='gelu-tanh-mqa-tied', seed=4, d=24, f=48, C=16, attn='qkv', mlp_scale=2.0,
         opts=dict(mlp='gelu_tanh', kv_heads=1, tied=True)),
    dict(name='rmsnorm-relu-nobias', seed=5, d=16, f=24, C=16, attn='in_proj',
         opts=dict(norm='rmsnorm', bias=False)),
    dict(name='layernorm-nobias-swiglu-halves', seed=6, d=32, f=40, C=20, attn='qkv', ln_eps=1e-5,
         opts=dict(norm='layernorm', norm_eps=1e-2, mlp='swiglu', bias=False, positions='rope',
                   rope_interleaved=False, kv_heads=2)),
    dict(name='swiglu-bias-mqa', seed=7, d=16, f=32, C=16, attn='qkv',
         opts=dict(norm='rmsnorm', mlp='swiglu', bias=True, positions='learned', kv_heads=1)),
    dict(name='rope-interleaved-bias-inproj', seed=8, d=16, f=32, C=16, attn='in_proj',
         opts=dict(positions='rope', rope_interleaved=True, rope_base=100.0)),
    dict(name='explicit-defaults-qkv', seed=9, d=16, f=24, C=16, attn='qkv',
         opts=dict(norm='layernorm', norm_eps=1e-5, mlp='relu', bias=True, positions='learned',
                   rope_interleaved=False, rope_base=10000.0, kv_heads=4, tied=False)),
    dict(name='rmsnorm-gelu-gqa-rope-tied', seed=10, d=24, f=36, C=16, attn='qkv', mlp_scale=2.0,
         opts=dict(norm='rmsnorm', mlp='gelu', bias=False, positions='rope', kv_heads=2, tied=True)),
    dict(name='ln-eps', seed=11, d=16, f=32, C=16, attn='in_proj', ln_eps=5e-2, opts={}),
    dict(name='gelu-tanh-rope-nobias-tied', seed=12, d=32, f=48, C=24, attn='in_proj', mlp_scale=2.0,
         opts=dict(mlp='gelu_tanh', bias=False, positions='rope', rope_interleaved=True, kv_heads=4,
                   tied=True, norm_eps=2e-2)),
]
H, L = 4, 2   # num_heads, num_layers of every model



def full_config(m):
    """The file's config JSON: the base keys of the format plus the model's options."""
    c = {'vocab_size': len(VOCAB), 'd_model': m['d'], 'num_heads': H, 'num_layers': L,
         'd_ff': m['f'], 'context': m['C'], 'ln_eps': m.get('ln_eps', 1e-5), 'unk': UNK}
    c.update(m['opts'])
    return c


def make_weights(m, cfg):
    """Random float32-representable weights in the tensor names of the format."""
    a = arch(cfg)
    d, f, V, C, g = a['d'], a['f'], a['V'], a['C'], a['kv_heads']
    dk = d // a['h']
    gen = torch.Generator().manual_seed(1000 + m['seed'])
    mat = lambda *s, sd=0.3: f32(torch.randn(*s, generator=gen, dtype=F64) * sd)
    vec = lambda n: f32(torch.randn(n, generator=gen, dtype=F64) * 0.1)
    gain = lambda n: f32(1 + torch.randn(n, generator=gen, dtype=F64) * 0.1)
    ms = m.get('mlp_scale', 1.0)
    W = {'tok_emb.weight': mat(V, d, sd=0.5)}
    if a['positions'] == 'learned':
        W['pos_emb.weight'] = mat(C, d, sd=0.5)

    def norm(p):
        W[p + '.weight'] = gain(d)
        if a['norm'] == 'layernorm':
            W[p + '.bias'] = vec(d)

    def linear(p, n_out, n_in, sd=0.3):
        W[p + '.weight'] = mat(n_out, n_in, sd=sd)
        if a['bias']:
            W[p + '.bias'] = vec(n_out)

    for l in range(a['L']):
        p = f'layers.{l}.'
        norm(p + 'ln1')
        if m['attn'] == 'in_proj':
            assert g == a['h']
            W[p + 'attn.in_proj_weight'] = mat(3 * d, d)
            if a['bias']:
                W[p + 'attn.in_proj_bias'] = vec(3 * d)
        else:
            linear(p + 'attn.q_proj', d, d)
            linear(p + 'attn.k_proj', g * dk, d)
            linear(p + 'attn.v_proj', g * dk, d)
        linear(p + 'attn.out_proj', d, d)
        norm(p + 'ln2')
        if a['mlp'] == 'swiglu':
            linear(p + 'mlp.gate', f, d)
            linear(p + 'mlp.up', f, d)
        else:
            linear(p + 'mlp.fc', f, d, sd=0.3 * ms)
        linear(p + 'mlp.proj', d, f, sd=0.3 * ms)
    norm('ln_f')
    if not a['tied']:
        W['head.weight'] = mat(V, d)
    if a['bias']:
        W['head.bias'] = vec(V)
    return W


# ---- safetensors ----------------------------------------------------------------------------------
def write_safetensors(path, tensors, metadata):
    """The safetensors layout: u64 LE header size, JSON header (padded with spaces to a multiple of 8),
    the raw little-endian float32 bytes in header order."""
    header, blobs, off = {'__metadata__': metadata}, [], 0
    for name in sorted(tensors):
        raw = b''.join(struct.pack('<f', v) for v in tensors[name].reshape(-1).tolist())
        header[name] = {'dtype': 'F32', 'shape': list(tensors[name].shape), 'data_offsets': [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-len(h) % 8)
    data = struct.pack('<Q', len(h)) + h + b''.join(blobs)
    with open(path, 'wb') as fh:
        fh.write(data)
    return data


def read_safetensors(data):
    n = struct.unpack('<Q', data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header.pop('__metadata__')
    out = {}
    for name, e in header.items():
        a, b = e['data_offsets']
        vals = struct.unpack(f'<{(b - a) // 4}f', data[8 + n + a:8 + n + b])
        out[name] = torch.tensor(vals, dtype=F64).reshape(e['shape'])
    return out, meta


# ---- output -----------------------------------------------------------------------------------------
def r7(v):
    return float(f'{v:.7g}')


def case(W, A, text, ablate=()):
    ids = encode(text)
    logp, att = forward(W, A, ids, ablate)
    return {
        'text': text, 'ablate': [list(p) for p in ablate], 'ids': ids,
        'logProbs': [[r7(v) for v in row] for row in logp.tolist()],
        'attention': [[[[r7(v) for v in row] for row in head] for head in w.tolist()] for w in att],
        'loss': bits(logp, ids),
    }


def texts_for(m):
    """Lengths 1, 7 and the full context; one text has a character outside the vocabulary (unk)."""
    C = m['C']
    long = ('the rain in ihe state, no trees. eat tea on time. ' * 2)[:C - 1] + 'z'
    return ['t', 'on z!ea', long]


def main():
    os.makedirs(OUT, exist_ok=True)
    check_rope()
    check_functions()
    report = []
    for m in MODELS:
        cfg = full_config(m)
        A = arch(cfg)
        W = make_weights(m, cfg)
        meta = {'format': FORMAT, 'config': json.dumps(cfg), 'vocab': json.dumps(VOCAB)}
        path = os.path.join(OUT, m['name'] + '.safetensors')
        data = write_safetensors(path, W, meta)
        back, meta2 = read_safetensors(data)
        assert meta2 == meta and set(back) == set(W) and all(torch.equal(back[k], W[k]) for k in W)
        texts = texts_for(m)
        full = encode(texts[2])
        checks = {}
        if m['name'] == 'default':
            checks['torch_nn_max_abs_err'] = check_default_against_torch(W, A)
        checks['gqa_as_mha_max_abs_err'] = check_gqa_as_mha(W, A, full)
        checks['option_sensitivity'] = sensitivity(W, A, full)
        ablate = ((0, 1), (1, 3))
        checks['float32_max_abs_err'] = float32_error(W, A, full, ablate)
        cases = [case(W, A, t) for t in texts] + [case(W, A, texts[2], ablate)]
        prompt = texts[1][:6] if m['seed'] % 2 else 'the r'
        gen_text, margin = greedy(W, A, prompt, 10)
        assert margin > GEN_MARGIN, f'{m["name"]}: greedy near-tie ({margin})'
        assert len(prompt) + 10 <= A['C']
        g = {'model': f'tests/golden-decoder/{m["name"]}.safetensors', 'config': cfg,
             'architecture': {k: A[k] for k in ('norm', 'eps', 'mlp', 'bias', 'positions', 'rope_base',
                                                'rope_interleaved', 'kv_heads', 'tied')},
             'attention_form': m['attn'], 'tensors': {k: list(v.shape) for k, v in sorted(W.items())},
             'cases': cases,
             'generate': {'prompt': prompt, 'n': 10, 'temperature': 0, 'text': prompt + gen_text,
                          'min_top2_margin': margin},
             'checks': checks}
        with open(os.path.join(OUT, m['name'] + '.json'), 'w') as fh:
            json.dump(g, fh, separators=(',', ':'))
        report.append((m['name'], len(data), checks, margin))
    for name, n, checks, margin in report:
        print(f'{name}: {n} bytes, greedy margin {margin:.3g}, float32 err {checks["float32_max_abs_err"]}, '
              f'sensitivity {{{", ".join(f"{k}: {v:.2g}" for k, v in checks["option_sensitivity"].items())}}}'
              + (f', torch.nn {checks["torch_nn_max_abs_err"]:.2g}' if 'torch_nn_max_abs_err' in checks else ''))


if __name__ == '__main__':
    main()
