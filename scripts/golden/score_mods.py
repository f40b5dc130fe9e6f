#!/usr/bin/python3
"""Golden cases for the score modifiers (soft-capping, ALiBi, sliding window) and rotary position
embedding (RoPE), written from the papers
in float64 PyTorch, independent of the engine. Usage: /usr/bin/python3 scripts/golden/score_mods.py
(writes tests/golden-mods/*.json; deterministic: fixed seeds, one thread).

Per query head h (kv head g = h // (num_heads / num_kv_heads), LLaMA-2 repeat_kv), query position i
(= i in a forward), key position j:
  Q ← RoPE(Q, i), K ← RoPE(K, j)                         Su et al. 2021 (RoFormer), §3.4, eq. 34: pair p of the
                                                        first r dims rotated by pos·θ^(−2p/r); pairs (2p, 2p+1)
                                                        (interleaved; RoFormer, GPT-J) or (p, p + r/2) (halves;
                                                        GPT-NeoX, HF Llama rotate_half); dims ≥ r unchanged
  S = Q_h·K_gᵀ / √d_k                                   Vaswani et al. 2017, eq. 1
  S ← cap·tanh(S / cap)                                 Gemma 2 (Gemma Team 2024): attention logit soft-capping
  S ← S − m_h·|i − j|                                   Press et al. 2022 (ALiBi), §3; |·| for non-causal as in
                                                        FlashAttention's alibi_slopes; slopes: get_slopes below
  mask: causal (j > i), window (j < i − left or j > i + right, −1 = unbounded: Beltagy et al. 2020,
        Mistral 7B, FlashAttention window_size), key padding (true = masked)
  A = softmax(S masked with −inf); a row with every key masked → 0 (PyTorch ≥ 2.5 SDPA / ONNX convention)
  head = A·V_g;  output = concat(heads)·W_O + b_O        weights [in, out], y = x·W + b
Format: as tests/golden/ (README there); `scores` is S after soft-cap and ALiBi, before any mask.
"""
import json, math, os, struct, sys
import torch

torch.set_num_threads(2)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'golden-mods')


def get_slopes(n):
    # Press et al. 2022, reference implementation (github.com/ofirpress/attention_with_linear_biases,
    # fairseq/models/transformer.py): geometric for powers of two, else closest power of two + every
    # other slope of twice as many heads.
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2]


def f32(a):
    return torch.as_tensor(a, dtype=torch.float64).to(torch.float32)


def short32(v):
    """The shortest decimal that round-trips through float32 (as a Python float)."""
    v = struct.unpack('f', struct.pack('f', v))[0]
    for p in range(1, 10):
        s = '%.*g' % (p, v)
        if struct.unpack('f', struct.pack('f', float(s)))[0] == v:
            return float(s)
    return v


def t32(a, semantics=None):
    a = f32(a)
    d = {'shape': list(a.shape), 'dtype': 'float32', 'data': [short32(v) for v in a.reshape(-1).tolist()]}
    if semantics: d['semantics'] = semantics
    return d


def t64(a):
    a = torch.as_tensor(a, dtype=torch.float64)
    return {'shape': list(a.shape), 'dtype': 'float64', 'data': [None if math.isnan(v) else float(v) for v in a.reshape(-1).tolist()]}


def tbool(a):
    a = torch.as_tensor(a, dtype=torch.bool)
    return {'shape': list(a.shape), 'dtype': 'bool', 'semantics': 'true_means_masked', 'data': [int(v) for v in a.reshape(-1).tolist()]}


def rope(x, pos, dim, base, interleaved):
    """RoPE of x [..., T, d] at positions pos [T] (RoFormer eq. 34 as a rotation of each pair)."""
    if dim == 0:
        return x
    p = torch.arange(dim // 2, dtype=torch.float64)
    theta = torch.tensor(base, dtype=torch.float64) ** (-2.0 * p / dim)
    ang = pos.to(torch.float64).view(-1, 1) * theta.view(1, -1)  # [T, dim/2]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    y = x.clone()
    if interleaved:
        a, b = x[..., 0:dim:2], x[..., 1:dim:2]
        y[..., 0:dim:2] = a * cos - b * sin
        y[..., 1:dim:2] = a * sin + b * cos
    else:
        a, b = x[..., :dim // 2], x[..., dim // 2:dim]
        y[..., :dim // 2] = a * cos - b * sin
        y[..., dim // 2:dim] = a * sin + b * cos
    return y


def rope_check():
    """Cross-checks rope() against the two published formulations: interleaved = multiplication by
    e^{i·m·θ_p} of complex pairs (RoFormer §3.2; Meta's llama apply_rotary_emb), halves = HF Llama's
    q·cos + rotate_half(q)·sin with cos/sin repeated over the two halves."""
    gen = torch.Generator().manual_seed(99)
    x = torch.randn(2, 3, 7, 10, generator=gen, dtype=torch.float64)
    pos = torch.arange(7) + 5
    for dim in (10, 6):
        p = torch.arange(dim // 2, dtype=torch.float64)
        ang = pos.double().view(-1, 1) * (500.0 ** (-2.0 * p / dim)).view(1, -1)
        z = torch.view_as_complex(x[..., :dim].reshape(*x.shape[:-1], dim // 2, 2).contiguous()) * torch.polar(torch.ones_like(ang), ang)
        want = torch.cat([torch.view_as_real(z).reshape(*x.shape[:-1], dim), x[..., dim:]], -1)
        assert torch.allclose(rope(x, pos, dim, 500.0, True), want, atol=1e-12)
        cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)
        xr = x[..., :dim]
        rot_half = torch.cat([-xr[..., dim // 2:], xr[..., :dim // 2]], -1)
        want = torch.cat([xr * cos + rot_half * sin, x[..., dim:]], -1)
        assert torch.allclose(rope(x, pos, dim, 500.0, False), want, atol=1e-12)


def reference(x, W, cfg, kpm, dtype=torch.float64):
    """The forward above. x [B, T, E] (numpy float32), W dict of numpy float32, kpm [B, T] bool or None."""
    E, h, g, dk = cfg['embed_dim'], cfg['num_heads'], cfg['num_kv_heads'], cfg['head_dim']
    B, T = x.shape[0], x.shape[1]
    X = x.to(dtype)
    t = lambda k: W[k].to(dtype) if k in W else None
    def lin(w, b):
        y = X @ t(w)
        return y + t(b) if b in W else y
    Q = lin('Wq', 'bq').reshape(B, T, h, dk).transpose(1, 2)  # [B, h, T, dk]
    K = lin('Wk', 'bk').reshape(B, T, g, dk).transpose(1, 2)
    V = lin('Wv', 'bv').reshape(B, T, g, dk).transpose(1, 2)
    r = cfg.get('rope')
    if r is not None:
        pos = torch.arange(T)
        Q = rope(Q, pos, r['dim'], r['base'], r['interleaved'])
        K = rope(K, pos, r['dim'], r['base'], r['interleaved'])
    K = K.repeat_interleave(h // g, dim=1)
    V = V.repeat_interleave(h // g, dim=1)
    S = Q @ K.transpose(-1, -2) / math.sqrt(dk)
    if cfg.get('softcap') is not None:
        cap = short32(cfg['softcap'])
        S = cap * torch.tanh(S / cap)
    i = torch.arange(T).view(T, 1)
    j = torch.arange(T).view(1, T)
    if cfg.get('alibi_slopes') is not None:
        m = f32(cfg['alibi_slopes']).to(dtype).view(1, h, 1, 1)
        S = S - m * (i - j).abs().to(dtype)
    scores = S.clone()
    masked = torch.zeros(B, h, T, T, dtype=torch.bool)
    if cfg.get('causal'):
        masked |= (j > i)
    win = cfg.get('window')
    if win is not None:
        left, right = win
        if left >= 0: masked |= (j < i - left)
        if right >= 0: masked |= (j > i + right)
    if kpm is not None:
        masked |= kpm.view(B, 1, 1, T)
    S = S.masked_fill(masked, float('-inf'))
    A = torch.softmax(S, dim=-1)
    A = torch.where(masked.all(-1, keepdim=True), torch.zeros_like(A), A)
    O = (A @ V).transpose(1, 2).reshape(B, T, h * dk)
    out = O @ t('Wo')
    if 'bo' in W: out = out + t('bo')
    return out, A, scores, masked


def make_case(name, seed, E, h, g, B, T, causal=False, softcap=None, alibi=None, slopes=None, window=None,
              kpm_lens=None, bias=True, x_scale=1.0, weights=True, rope_opts=None, notes=''):
    gen = torch.Generator().manual_seed(seed)
    uni = lambda lo, hi, *shape: torch.rand(*shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo
    dk = E // h
    W = {
        'Wq': f32(uni(-1, 1, E, h * dk) * math.sqrt(6 / (E + h * dk))),
        'Wk': f32(uni(-1, 1, E, g * dk) * math.sqrt(6 / (E + g * dk))),
        'Wv': f32(uni(-1, 1, E, g * dk) * math.sqrt(6 / (E + g * dk))),
        'Wo': f32(uni(-1, 1, h * dk, E) * math.sqrt(6 / (E + h * dk))),
    }
    if bias:
        W.update(bq=f32(uni(-0.1, 0.1, h * dk)), bk=f32(uni(-0.1, 0.1, g * dk)),
                 bv=f32(uni(-0.1, 0.1, g * dk)), bo=f32(uni(-0.1, 0.1, E)))
    x = f32(torch.randn(B, T, E, generator=gen, dtype=torch.float64) * x_scale)
    cfg = {'embed_dim': E, 'num_heads': h, 'num_kv_heads': g, 'head_dim': dk, 'bias': bias, 'B': B, 'Tq': T, 'Tk': T,
           'self_attention': True, 'causal': causal, 'softcap': softcap, 'window': window, 'rope': None}
    if rope_opts is not None:  # {dim (None = d_k), base, interleaved}
        ro = dict(rope_opts)
        cfg['rope_given'] = dict(ro)
        cfg['rope'] = {'dim': dk if ro.get('dim') is None else ro['dim'], 'base': short32(ro.get('base', 10000.0)),
                       'interleaved': ro.get('interleaved', False)}
    if alibi == 'default':
        cfg['alibi'] = 'default'
        cfg['alibi_slopes'] = [short32(s) for s in get_slopes(h)]
    elif alibi == 'given':
        cfg['alibi'] = 'given'
        cfg['alibi_slopes'] = [short32(s) for s in slopes]
    else:
        cfg['alibi'] = None
        cfg['alibi_slopes'] = None
    kpm = None
    if kpm_lens is not None:
        kpm = torch.tensor([[t >= L for t in range(T)] for L in kpm_lens], dtype=torch.bool)
    out, A, scores, masked = reference(x, W, cfg, kpm)
    out32, A32, _, _ = reference(x, W, cfg, kpm, dtype=torch.float32)
    rows = [[b, q] for b in range(B) for q in range(T) if bool(masked[b, 0, q].all())]
    cfg['fully_masked_query_rows'] = rows
    c = {
        'name': name, 'kind': 'score_mods', 'source': f'torch {torch.__version__} scripts/golden/score_mods.py (float64)',
        'config': cfg,
        'inputs': {'x': t32(x), **({'key_padding_mask': tbool(kpm)} if kpm is not None else {})},
        'weights': {k: t32(v) for k, v in W.items()},
        'outputs': {'output': t64(out)},
        'torch_output_has_nan': False,
        'tolerance_hint': {'torch_float32_max_abs_err': {
            'output': float((out32.double() - out).abs().max()),
            'attn_weights_per_head': float((A32.double() - A).abs().max())}},
        'notes': notes,
    }
    if weights:
        c['outputs']['attn_weights_per_head'] = t64(A)
        c['outputs']['attn_weights_avg'] = t64(A.mean(1))
        c['outputs']['scores'] = t64(scores)
    with open(os.path.join(OUT, name + '.json'), 'w') as f:
        json.dump(c, f, separators=(',', ':'))
    print(name, 'max|out|', float(out.abs().max()), 'hint', c['tolerance_hint']['torch_float32_max_abs_err'])


def main():
    os.makedirs(OUT, exist_ok=True)
    rope_check()
    if len(sys.argv) > 1 and sys.argv[1] == '--rope-only':
        return rope_cases()
    make_case('softcap_E16_h4_T7', 1, 16, 4, 4, 1, 7, softcap=1.5, x_scale=3.0,
              notes='cap 1.5 below the scores (|S| up to ~10): tanh saturates')
    make_case('softcap_causal_kpm_E16_h2_B2_T6', 2, 16, 2, 2, 2, 6, causal=True, softcap=4.0, x_scale=2.0, kpm_lens=[6, 4])
    make_case('alibi_default_E16_h4_T8', 3, 16, 4, 4, 1, 8, alibi='default', notes='non-causal: −m·|i − j|')
    make_case('alibi_default_causal_E24_h6_T7', 4, 24, 6, 6, 1, 7, causal=True, alibi='default',
              notes='h = 6: slopes of 4 heads then every other slope of 8 heads')
    make_case('alibi_given_E16_h4_T6', 5, 16, 4, 4, 1, 6, alibi='given', slopes=[0.5, 0.25, 1.0, 0.0])
    make_case('alibi_given_kpm_E24_h6_B2_T5', 6, 24, 6, 6, 2, 5, alibi='given', slopes=[0.3, -0.2, 0.1, 0.7, 0.05, 2.0],
              kpm_lens=[5, 3])
    make_case('window_left_causal_E16_h4_T9', 7, 16, 4, 4, 1, 9, causal=True, window=[2, -1],
              notes='Mistral-style: each query sees itself and the 2 keys before it')
    make_case('window_both_E16_h2_T8', 8, 16, 2, 2, 1, 8, window=[1, 2])
    make_case('window_right_only_E8_h2_T6', 9, 8, 2, 2, 1, 6, window=[-1, 0], notes='[−1, 0] equals causal')
    make_case('window_gqa_kpm_E16_h4_g2_B2_T7', 10, 16, 4, 2, 2, 7, window=[1, 1], kpm_lens=[7, 2],
              notes='rows 4.. of batch 1 see only padded keys: weights and head outputs 0')
    make_case('all_mods_gqa_causal_kpm_E24_h6_g2_B3_T9', 11, 24, 6, 2, 3, 9, causal=True, softcap=2.0, alibi='default',
              window=[3, -1], kpm_lens=[9, 6, 8], x_scale=2.0)
    make_case('alibi_softcap_window_E8_h2_T80', 12, 8, 2, 2, 1, 80, softcap=3.0, alibi='given', slopes=[0.125, 0.5],
              window=[20, 5], x_scale=2.0, notes='T = 80 > 64 keys: the packed path; window key blocks skipped')
    make_case('stream_window_alibi_softcap_E8_h2_T700', 13, 8, 2, 2, 1, 700, causal=True, softcap=3.0, alibi='default',
              window=[100, -1], x_scale=2.0, weights=False,
              notes='T = 700 > 512 keys: without weights the streaming (online-softmax) path; output only')

    rope_cases()


def rope_cases():
    make_case('rope_halves_E16_h2_T8', 21, 16, 2, 2, 1, 8, rope_opts={}, x_scale=2.0,
              notes='RoPE defaults: dim = d_k = 8, θ = 10000, halves (GPT-NeoX / HF Llama)')
    make_case('rope_interleaved_causal_E16_h2_T9', 22, 16, 2, 2, 1, 9, causal=True, x_scale=2.0,
              rope_opts={'interleaved': True, 'base': 100.0}, notes='interleaved pairs (RoFormer, GPT-J), θ = 100')
    make_case('rope_partial_halves_E24_h2_T7', 23, 24, 2, 2, 1, 7, causal=True, x_scale=2.0,
              rope_opts={'dim': 4, 'base': 50.0}, notes='rotary dim 4 of d_k = 12: dims 4.. pass through')
    make_case('rope_partial_interleaved_E24_h3_T6', 24, 24, 3, 3, 1, 6, x_scale=2.0,
              rope_opts={'dim': 6, 'interleaved': True, 'base': 20.0})
    make_case('rope_gqa_causal_kpm_E32_h4_g2_B3_T9', 25, 32, 4, 2, 3, 9, causal=True, kpm_lens=[9, 5, 7], x_scale=2.0,
              rope_opts={'base': 30.0}, notes='GQA: K rotated per kv head; causal + key padding; a batch of 3')
    make_case('rope_gqa_batch_causal_E16_h4_g1_B2_T10', 26, 16, 4, 1, 2, 10, causal=True, x_scale=2.0,
              rope_opts={'interleaved': True, 'base': 40.0}, notes='MQA (1 kv head), batch of 2 (KV cache checked)')
    make_case('rope_alibi_window_E16_h4_T12', 27, 16, 4, 4, 1, 12, causal=True, alibi='default', window=[4, -1],
              softcap=5.0, x_scale=2.0, rope_opts={'dim': 2, 'base': 10.0},
              notes='RoPE with ALiBi, a window and a soft-cap (composition)')
    make_case('rope_packed_E16_h2_T80', 28, 16, 2, 2, 1, 80, x_scale=2.0, window=[30, 10],
              rope_opts={'base': 100.0}, notes='T = 80 > 64 keys: packed path')
    make_case('rope_stream_causal_E16_h2_T700', 29, 16, 2, 2, 1, 700, causal=True, x_scale=2.0, weights=False,
              rope_opts={'base': 1000.0, 'interleaved': True},
              notes='T = 700 > 512 keys: streaming path without weights; positions up to 699')
    make_case('rope_stream_window_E16_h2_T700', 30, 16, 2, 2, 1, 700, x_scale=2.0, weights=False, window=[64, 64],
              rope_opts={}, notes='streaming, non-causal, window, default RoPE (θ = 10000, halves)')


if __name__ == '__main__':
    main()
