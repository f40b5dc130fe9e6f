#!/usr/bin/python3
"""Golden cases for Hugging Face model folders (web/lib/src/formats/hf.js): tiny random GPT2LMHeadModel and
LlamaForCausalLM checkpoints in the layouts Hugging Face publishes (config.json, model.safetensors
or a sharded model.safetensors.index.json; float32, float16 and bfloat16 tensors), and a float64
PyTorch reference written from each architecture's description, independent of the engine and of
hf.js's mapping onto the core's options.

    /usr/bin/python3 scripts/golden/hf_models.py

writes tests/golden-hf/<name>/ (the model folder, no tokenizer: the cases are token ids) and
tests/golden-hf/<name>.json (config, cases: ids, logProbs [T, V], attention per layer [h, T, T],
greedy continuation). Deterministic (fixed seeds). Needs only PyTorch (Debian's python3-torch).

GPT2LMHeadModel (Radford et al. 2019; transformers' modeling_gpt2.py), names as stored by
GPT2LMHeadModel.save_pretrained (`transformer.` prefix):
  x = wte[id_t] + wpe[t]
  per block: a = LN(x; ln_1, layer_norm_epsilon)
             qkv = a @ c_attn.weight + c_attn.bias      Conv1D: weight [in, out] = [d, 3d], y = x W + b
             q, k, v = split(qkv, d) (columns 0..d, d..2d, 2d..3d); heads = d_k-column blocks
             A = softmax(q k^T / sqrt(d_k) + causal), o = A v, x += concat(o) @ attn.c_proj.weight + bias
             m = LN(x; ln_2), x += act(m @ c_fc.weight + b) @ mlp.c_proj.weight + b
             act: gelu_new = 0.5 z (1 + tanh(sqrt(2/pi)(z + 0.044715 z^3))), gelu = exact (erf), relu
  logits = LN(x; ln_f) @ wte^T (tie_word_embeddings, the default) or lm_head.weight^T
LlamaForCausalLM (Touvron et al. 2023; modeling_llama.py), nn.Linear weights [out, in], y = x W^T (+ b):
  x = embed_tokens[id_t]
  per layer: a = RMSNorm(x) = x / sqrt(mean(x^2) + rms_norm_eps) * input_layernorm.weight
             q = a q_proj^T [T, h d_k], k, v = a k_proj^T, a v_proj^T [T, g d_k] (+ biases: attention_bias)
             RoPE per head (Su et al. 2021), HF's rotate_half form: x*cos + rotate_half(x)*sin,
               rotate_half(x) = cat(-x[d_k/2:], x[:d_k/2]), angle t * theta_i on columns i and i + d_k/2,
               theta_i = rope_theta^(-2i/d_k)
             head j uses K/V head j // (h/g) (num_key_value_heads); A = softmax(q k^T/sqrt(d_k) + causal)
             x += concat(A v) o_proj^T (+ b)
             m = RMSNorm(x; post_attention_layernorm), x += (silu(m gate^T) * (m up^T)) down^T (+ mlp_bias)
  logits = RMSNorm(x; model.norm) @ (lm_head or embed_tokens)^T

Self-checks before anything is written: rotate_half against the complex-number RoPE of Meta's code
on the permuted (interleaved) rows — the permutation Hugging Face's conversions apply — and every
file read back.
"""
import json
import math
import os
import struct

import torch

torch.set_num_threads(2)
F64 = torch.float64
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'golden-hf')
V = 40
GEN_MARGIN = 1e-2
DTYPES = {'F32': torch.float32, 'F16': torch.float16, 'BF16': torch.bfloat16}

MODELS = [
    dict(name='gpt2-tied-gelu-new', family='gpt2', seed=1, dtype='F32', config=dict(
        n_embd=16, n_head=4, n_layer=2, n_positions=16, activation_function='gelu_new', layer_norm_epsilon=1e-5)),
    dict(name='gpt2-untied-gelu-f16', family='gpt2', seed=2, dtype='F16', prefix='', config=dict(
        n_embd=24, n_head=3, n_layer=2, n_positions=12, n_inner=40, activation_function='gelu',
        layer_norm_epsilon=1e-3, tie_word_embeddings=False), mlp_scale=2.0),
    dict(name='gpt2-relu-bf16', family='gpt2', seed=3, dtype='BF16', config=dict(
        n_embd=16, n_head=2, n_layer=1, n_positions=16, activation_function='relu', layer_norm_epsilon=1e-5)),
    dict(name='llama-gqa-tied', family='llama', seed=4, dtype='F32', config=dict(
        hidden_size=32, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2, intermediate_size=48,
        max_position_embeddings=24, rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=True)),
    dict(name='llama-bias-untied-bf16', family='llama', seed=5, dtype='BF16', config=dict(
        hidden_size=24, num_attention_heads=3, num_key_value_heads=3, num_hidden_layers=2, intermediate_size=40,
        max_position_embeddings=16, rms_norm_eps=1e-5, rope_theta=500.0, tie_word_embeddings=False,
        attention_bias=True, mlp_bias=True)),
    dict(name='llama-mqa-f16-sharded', family='llama', seed=6, dtype='F16', shards=2, config=dict(
        hidden_size=32, num_attention_heads=4, num_key_value_heads=1, num_hidden_layers=3, intermediate_size=40,
        max_position_embeddings=20, rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False)),
]


def full_config(m):
    c = dict(m['config'])
    c['vocab_size'] = V
    if m['family'] == 'gpt2':
        c.update(architectures=['GPT2LMHeadModel'], model_type='gpt2', bos_token_id=0, eos_token_id=0)
    else:
        c.update(architectures=['LlamaForCausalLM'], model_type='llama', hidden_act='silu', bos_token_id=1, eos_token_id=2)
    c['torch_dtype'] = {'F32': 'float32', 'F16': 'float16', 'BF16': 'bfloat16'}[m['dtype']]
    return c


def make_weights(m, c):
    """Random weights, rounded to the file's dtype (the reference uses exactly the stored values)."""
    gen = torch.Generator().manual_seed(2000 + m['seed'])
    dt = DTYPES[m['dtype']]
    rnd = lambda t: t.to(dt).to(F64)
    mat = lambda *s, sd=0.3: rnd(torch.randn(*s, generator=gen, dtype=F64) * sd)
    vec = lambda n: rnd(torch.randn(n, generator=gen, dtype=F64) * 0.1)
    gain = lambda n: rnd(1 + torch.randn(n, generator=gen, dtype=F64) * 0.1)
    W = {}
    if m['family'] == 'gpt2':
        d, L, C = c['n_embd'], c['n_layer'], c['n_positions']
        f = c.get('n_inner') or 4 * d
        ms = m.get('mlp_scale', 1.0)
        p0 = m.get('prefix', 'transformer.')
        W[p0 + 'wte.weight'] = mat(V, d, sd=0.5)
        W[p0 + 'wpe.weight'] = mat(C, d, sd=0.5)
        for l in range(L):
            p = f'{p0}h.{l}.'
            W[p + 'ln_1.weight'], W[p + 'ln_1.bias'] = gain(d), vec(d)
            W[p + 'attn.c_attn.weight'], W[p + 'attn.c_attn.bias'] = mat(d, 3 * d), vec(3 * d)
            W[p + 'attn.c_proj.weight'], W[p + 'attn.c_proj.bias'] = mat(d, d), vec(d)
            W[p + 'ln_2.weight'], W[p + 'ln_2.bias'] = gain(d), vec(d)
            W[p + 'mlp.c_fc.weight'], W[p + 'mlp.c_fc.bias'] = mat(d, f, sd=0.3 * ms), vec(f)
            W[p + 'mlp.c_proj.weight'], W[p + 'mlp.c_proj.bias'] = mat(f, d, sd=0.3 * ms), vec(d)
            # the causal-mask buffer older GPT-2 checkpoints store (not a weight; the loader skips it)
            if l == 0 and m['name'] == 'gpt2-tied-gelu-new':
                W[p + 'attn.bias'] = torch.tril(torch.ones(C, C, dtype=F64)).view(1, 1, C, C)
        W[p0 + 'ln_f.weight'], W[p0 + 'ln_f.bias'] = gain(d), vec(d)
        if not c.get('tie_word_embeddings', True):
            W['lm_head.weight'] = mat(V, d)
    else:
        d, L, f = c['hidden_size'], c['num_hidden_layers'], c['intermediate_size']
        h, g = c['num_attention_heads'], c['num_key_value_heads']
        dk = d // h
        W['model.embed_tokens.weight'] = mat(V, d, sd=0.5)

        def lin(name, o, i, bias):
            W[name + '.weight'] = mat(o, i)
            if bias:
                W[name + '.bias'] = vec(o)
        for l in range(L):
            p = f'model.layers.{l}.'
            W[p + 'input_layernorm.weight'] = gain(d)
            ab, mb = c.get('attention_bias', False), c.get('mlp_bias', False)
            lin(p + 'self_attn.q_proj', d, d, ab)
            lin(p + 'self_attn.k_proj', g * dk, d, ab)
            lin(p + 'self_attn.v_proj', g * dk, d, ab)
            lin(p + 'self_attn.o_proj', d, d, ab)
            W[p + 'post_attention_layernorm.weight'] = gain(d)
            lin(p + 'mlp.gate_proj', f, d, mb)
            lin(p + 'mlp.up_proj', f, d, mb)
            lin(p + 'mlp.down_proj', d, f, mb)
        W['model.norm.weight'] = gain(d)
        if not c.get('tie_word_embeddings', False):
            W['lm_head.weight'] = mat(V, d)
    return W


# ---- the references -------------------------------------------------------------------------------
def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def causal_softmax(s):
    T = s.shape[-1]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    return torch.softmax(s.masked_fill(mask, float('-inf')), -1)


def gpt2_forward(c, W, ids, prefix):
    d, h, L = c['n_embd'], c['n_head'], c['n_layer']
    dk = d // h
    eps = c['layer_norm_epsilon']
    act = {'gelu_new': lambda z: 0.5 * z * (1 + torch.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3))),
           'gelu': lambda z: 0.5 * z * (1 + torch.erf(z / math.sqrt(2))),
           'relu': torch.relu}[c['activation_function']]
    P = lambda n: W[prefix + n]
    T = len(ids)
    x = P('wte.weight')[ids] + P('wpe.weight')[:T]
    atts = []
    for l in range(L):
        p = f'h.{l}.'
        a = layer_norm(x, P(p + 'ln_1.weight'), P(p + 'ln_1.bias'), eps)
        qkv = a @ P(p + 'attn.c_attn.weight') + P(p + 'attn.c_attn.bias')
        q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
        heads, A_l = [], []
        for j in range(h):
            sl = slice(j * dk, (j + 1) * dk)
            A = causal_softmax(q[:, sl] @ k[:, sl].T / math.sqrt(dk))
            A_l.append(A)
            heads.append(A @ v[:, sl])
        atts.append(torch.stack(A_l))
        x = x + torch.cat(heads, 1) @ P(p + 'attn.c_proj.weight') + P(p + 'attn.c_proj.bias')
        mm = layer_norm(x, P(p + 'ln_2.weight'), P(p + 'ln_2.bias'), eps)
        x = x + act(mm @ P(p + 'mlp.c_fc.weight') + P(p + 'mlp.c_fc.bias')) @ P(p + 'mlp.c_proj.weight') + P(p + 'mlp.c_proj.bias')
    y = layer_norm(x, P('ln_f.weight'), P('ln_f.bias'), eps)
    head = W['lm_head.weight'] if 'lm_head.weight' in W else P('wte.weight')
    return torch.log_softmax(y @ head.T, -1), atts


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], -1)


def rope_halves(x, theta):
    """HF Llama: x [T, d_k] of one head, angles t * theta^(-2i/d_k) on columns i and i + d_k/2."""
    T, dk = x.shape
    inv = theta ** (-torch.arange(0, dk, 2, dtype=F64) / dk)
    ang = torch.arange(T, dtype=F64)[:, None] * inv[None, :]
    emb = torch.cat([ang, ang], -1)
    return x * torch.cos(emb) + rotate_half(x) * torch.sin(emb)


def rope_complex_interleaved(x, theta):
    """Meta's llama: pairs (x[2i], x[2i+1]) as complex numbers times exp(i t theta_i)."""
    T, dk = x.shape
    inv = theta ** (-torch.arange(0, dk, 2, dtype=F64) / dk)
    ang = torch.arange(T, dtype=F64)[:, None] * inv[None, :]
    z = torch.complex(x[:, 0::2], x[:, 1::2]) * torch.polar(torch.ones_like(ang), ang)
    return torch.stack([z.real, z.imag], -1).reshape(T, dk)


def llama_forward(c, W, ids):
    d, h, g, L = c['hidden_size'], c['num_attention_heads'], c['num_key_value_heads'], c['num_hidden_layers']
    dk, eps, theta = d // h, c['rms_norm_eps'], c['rope_theta']
    lin = lambda x, name: x @ W[name + '.weight'].T + (W[name + '.bias'] if name + '.bias' in W else 0)
    x = W['model.embed_tokens.weight'][ids]
    atts = []
    for l in range(L):
        p = f'model.layers.{l}.'
        a = rms_norm(x, W[p + 'input_layernorm.weight'], eps)
        q, k, v = lin(a, p + 'self_attn.q_proj'), lin(a, p + 'self_attn.k_proj'), lin(a, p + 'self_attn.v_proj')
        heads, A_l = [], []
        for j in range(h):
            cj = j // (h // g)
            qj = rope_halves(q[:, j * dk:(j + 1) * dk], theta)
            kj = rope_halves(k[:, cj * dk:(cj + 1) * dk], theta)
            A = causal_softmax(qj @ kj.T / math.sqrt(dk))
            A_l.append(A)
            heads.append(A @ v[:, cj * dk:(cj + 1) * dk])
        atts.append(torch.stack(A_l))
        x = x + lin(torch.cat(heads, 1), p + 'self_attn.o_proj')
        mm = rms_norm(x, W[p + 'post_attention_layernorm.weight'], eps)
        gate = lin(mm, p + 'mlp.gate_proj')
        x = x + lin(gate * torch.sigmoid(gate) * lin(mm, p + 'mlp.up_proj'), p + 'mlp.down_proj')
    y = rms_norm(x, W['model.norm.weight'], eps)
    head = W.get('lm_head.weight', W['model.embed_tokens.weight'])
    return torch.log_softmax(y @ head.T, -1), atts


def self_check_rope():
    """rotate_half on HF's rows = Meta's complex RoPE on the interleaved rows they came from."""
    gen = torch.Generator().manual_seed(7)
    dk, T = 8, 6
    x_inter = torch.randn(T, dk, generator=gen, dtype=F64)
    # HF's conversion permutes each head's rows: interleaved index 2i + s -> halves index s*dk/2 + i
    perm = [2 * i + s for s in range(2) for i in range(dk // 2)]
    x_halves = x_inter[:, perm]
    a = rope_halves(x_halves, 10000.0)
    b = rope_complex_interleaved(x_inter, 10000.0)[:, perm]
    assert torch.allclose(a, b, atol=1e-12), (a - b).abs().max()


# ---- files -----------------------------------------------------------------------------------------
def tensor_bytes(t, dtype):
    dt = DTYPES[dtype]
    if dtype == 'BF16':
        return t.to(dt).view(torch.int16).numpy().tobytes()
    return t.to(dt).numpy().astype('<' + ('f4' if dtype == 'F32' else 'f2')).tobytes()


def write_safetensors(path, tensors, dtype):
    header, blobs, off = {'__metadata__': {'format': 'pt'}}, [], 0
    for name in sorted(tensors):
        raw = tensor_bytes(tensors[name], dtype)
        header[name] = {'dtype': dtype, 'shape': list(tensors[name].shape), 'data_offsets': [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as fh:
        fh.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))


def read_back(path, dtype):
    data = open(path, 'rb').read()
    n = struct.unpack('<Q', data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == '__metadata__':
            continue
        raw = bytearray(data[8 + n + e['data_offsets'][0]:8 + n + e['data_offsets'][1]])
        if dtype == 'BF16':
            t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(raw, dtype=DTYPES[dtype])
        out[name] = t.to(F64).reshape(e['shape'])
    return out


def r(x):
    return float(f'{x:.9g}')


def main():
    self_check_rope()
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(99)
    for m in MODELS:
        c = full_config(m)
        W = make_weights(m, c)
        folder = os.path.join(OUT, m['name'])
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, 'config.json'), 'w') as fh:
            json.dump(c, fh, indent=2)
        names = sorted(W)
        if m.get('shards'):
            n = m['shards']
            groups = [names[i::n] for i in range(n)]
            wm = {}
            for i, grp in enumerate(groups):
                fn = f'model-{i + 1:05d}-of-{n:05d}.safetensors'
                write_safetensors(os.path.join(folder, fn), {k: W[k] for k in grp}, m['dtype'])
                for k in grp:
                    wm[k] = fn
                back = read_back(os.path.join(folder, fn), m['dtype'])
                assert all(torch.equal(back[k], W[k]) for k in grp)
            total = sum(W[k].numel() * (4 if m['dtype'] == 'F32' else 2) for k in names)
            with open(os.path.join(folder, 'model.safetensors.index.json'), 'w') as fh:
                json.dump({'metadata': {'total_size': total}, 'weight_map': dict(sorted(wm.items()))}, fh, indent=2)
        else:
            write_safetensors(os.path.join(folder, 'model.safetensors'), W, m['dtype'])
            back = read_back(os.path.join(folder, 'model.safetensors'), m['dtype'])
            assert all(torch.equal(back[k], W[k]) for k in names)
        ctx = c.get('n_positions') or c['max_position_embeddings']
        fwd = (lambda ids: gpt2_forward(c, W, ids, m.get('prefix', 'transformer.'))) if m['family'] == 'gpt2' else (lambda ids: llama_forward(c, W, ids))
        cases = []
        for T in (1, 5, min(ctx, 9)):
            ids = torch.randint(0, V, (T,), generator=gen).tolist()
            lp, atts = fwd(ids)
            cases.append({'ids': ids, 'logProbs': [[r(v) for v in row] for row in lp.tolist()],
                          'attention': [[[[r(v) for v in row] for row in A] for A in at.tolist()] for at in atts]})
        # greedy: argmax of a full forward over the growing ids, each step won by GEN_MARGIN
        prompt = cases[1]['ids']
        ids = list(prompt)
        for _ in range(6):
            lp, _a = fwd(ids)
            top = torch.topk(lp[-1], 2)
            assert top.values[0] - top.values[1] > GEN_MARGIN, f'{m["name"]}: near-tie at step {len(ids)}'
            ids.append(int(top.indices[0]))
        out = {'name': m['name'], 'family': m['family'], 'dtype': m['dtype'], 'config': c,
               'cases': cases, 'generate': {'prompt': prompt, 'ids': ids[len(prompt):]}}
        with open(os.path.join(OUT, m['name'] + '.json'), 'w') as fh:
            json.dump(out, fh, separators=(',', ':'))
        print(m['name'], 'written')


if __name__ == '__main__':
    main()
