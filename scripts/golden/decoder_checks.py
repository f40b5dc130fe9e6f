"""Self-checks of the decoder reference (decoder_reference.py), run by scripts/golden/decoder.py
before anything is written.


Self-checks run before anything is written: the default (in_proj) model against
torch.nn.Embedding/LayerNorm/MultiheadAttention/Linear; RoPE against the complex-number (RoFormer
§3.2, Meta's llama) and rotate_half (HF Llama) formulations; GQA against the equal MHA whose K/V
rows are repeated per group; the activations and norms against torch.nn.functional; the safetensors
files read back. Each option must matter: changing it (eps, RoPE layout or base, GELU form, K/V group
mapping, norm kind, ablation) moves the log-probabilities or attention by more than 10× the test
tolerance (2.5× for GELU exact vs tanh, whose activations differ by at most 5e-4; Llama's eps 1e-6 vs
1e-5 is recorded, not asserted), and the float32 forward stays 4× inside the tolerances. Greedy
steps must win by a log-probability margin of 0.01 (no near-ties).
"""
import torch

import decoder_reference as reference
from decoder_reference import F64, forward, gelu, gelu_tanh, layer_norm, rms_norm, rope, silu

# The tolerances of tests/golden-decoder.test.mjs (the same as tests/model.test.mjs).
TOL = {'logProbs': 2e-4, 'attention': 2e-5, 'loss': 1e-4}


def check_default_against_torch(W, A):
    """The default architecture through torch.nn modules (MultiheadAttention for the attention)."""
    from torch import nn
    d, h, V, C = A['d'], A['h'], A['V'], A['C']
    emb, pos = nn.Embedding(V, d).double(), nn.Embedding(C, d).double()
    emb.weight.data.copy_(W['tok_emb.weight'])
    pos.weight.data.copy_(W['pos_emb.weight'])

    def ln(p):
        m = nn.LayerNorm(d, eps=A['eps']).double()
        m.weight.data.copy_(W[p + '.weight'])
        m.bias.data.copy_(W[p + '.bias'])
        return m

    def linear(p):
        w = W[p + '.weight']
        m = nn.Linear(w.shape[1], w.shape[0]).double()
        m.weight.data.copy_(w)
        m.bias.data.copy_(W[p + '.bias'])
        return m

    for ablate in ((), ((0, 1), (1, 3))):
        ids = [0, 3, 9, 5, 11, 2, 7, 7, 1, 4, 10, 6]
        T = len(ids)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        with torch.no_grad():
            x = emb(torch.tensor(ids))[None] + pos(torch.arange(T))[None]
            ws = []
            for l in range(A['L']):
                p = f'layers.{l}.'
                mha = nn.MultiheadAttention(d, h, batch_first=True).double()
                mha.in_proj_weight.data.copy_(W[p + 'attn.in_proj_weight'])
                mha.in_proj_bias.data.copy_(W[p + 'attn.in_proj_bias'])
                mha.out_proj.weight.data.copy_(W[p + 'attn.out_proj.weight'])
                mha.out_proj.bias.data.copy_(W[p + 'attn.out_proj.bias'])
                dk = d // h
                for ll, j in ablate:   # the doc's ablation: columns of out_proj.weight of head j
                    if ll == l:
                        mha.out_proj.weight.data[:, j * dk:(j + 1) * dk] = 0
                a = ln(p + 'ln1')(x)
                y, w = mha(a, a, a, attn_mask=mask, need_weights=True, average_attn_weights=False)
                ws.append(w[0])
                x = x + y
                x = x + linear(p + 'mlp.proj')(torch.relu(linear(p + 'mlp.fc')(ln(p + 'ln2')(x))))
            want = torch.log_softmax(linear('head')(ln('ln_f')(x))[0], dim=-1)
        got, att = forward(W, A, ids, ablate)
        err = max((got - want).abs().max().item(), *[(a - b).abs().max().item() for a, b in zip(att, ws)])
        assert err < 1e-12, f'default model vs torch.nn: {err}'
    return err


def check_rope():
    """rope() against the complex-number form (interleaved) and rotate_half (halves)."""
    gen = torch.Generator().manual_seed(99)
    x = torch.randn(3, 9, 8, generator=gen, dtype=F64)
    dk, base = 8, 500.0
    ang = torch.arange(9, dtype=F64)[:, None] * (base ** (-2 * torch.arange(dk // 2, dtype=F64) / dk))[None]
    z = torch.view_as_complex(x.reshape(3, 9, dk // 2, 2).contiguous()) * torch.polar(torch.ones_like(ang), ang)
    assert torch.allclose(rope(x, base, True), torch.view_as_real(z).reshape(3, 9, dk), atol=1e-12)
    cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
    rot_half = torch.cat([-x[..., dk // 2:], x[..., :dk // 2]], -1)
    assert torch.allclose(rope(x, base, False), x * cos + rot_half * sin, atol=1e-12)


def check_functions():
    import torch.nn.functional as Fn
    z = torch.linspace(-7, 7, 2001, dtype=F64)
    assert torch.allclose(gelu(z), Fn.gelu(z), atol=1e-14)
    assert torch.allclose(gelu_tanh(z), Fn.gelu(z, approximate='tanh'), atol=1e-14)
    assert torch.allclose(silu(z), Fn.silu(z), atol=1e-14)
    x = torch.randn(5, 16, generator=torch.Generator().manual_seed(3), dtype=F64)
    w, b = torch.rand(16, dtype=F64) + 0.5, torch.randn(16, dtype=F64)
    assert torch.allclose(layer_norm(x, w, b, 1e-2), Fn.layer_norm(x, (16,), w, b, 1e-2), atol=1e-13)
    ms = (x * x).mean(-1, keepdim=True)
    assert torch.allclose(rms_norm(x, w, 1e-2), x * torch.rsqrt(ms + 1e-2) * w, atol=1e-13)


def check_gqa_as_mha(W, A, ids):
    """A GQA model equals the MHA model whose K/V heads are copied to every query head of the group."""
    h, g, d = A['h'], A['kv_heads'], A['d']
    dk = d // h
    if g == h:
        return 0.0
    W2 = dict(W)
    for l in range(A['L']):
        for n in ('k_proj', 'v_proj'):
            for s in ('.weight', '.bias'):
                key = f'layers.{l}.attn.{n}{s}'
                if key in W:
                    t = W[key].view(g, dk, *W[key].shape[1:])
                    W2[key] = t.repeat_interleave(h // g, dim=0).reshape(h * dk, *W[key].shape[1:])
    got, att = forward(W, A, ids)
    want, att2 = forward(W2, dict(A, kv_heads=h), ids)
    err = max((got - want).abs().max().item(), *[(a - b).abs().max().item() for a, b in zip(att, att2)])
    assert err < 1e-12, f'GQA vs repeated-K/V MHA: {err}'
    return err


def diff(a, b):
    (la, aa), (lb, ab) = a, b
    return max((la - lb).abs().max().item(), *[(x - y).abs().max().item() for x, y in zip(aa, ab)])


def sensitivity(W, A, ids):
    """Max |Δ| of logProbs (and attention) when one option of the model is changed: every option the
    model sets must move the result by more than 10× the test's logProbs tolerance."""
    base = forward(W, A, ids)
    out = {}
    if A['positions'] == 'rope':
        out['rope_interleaved'] = diff(base, forward(W, dict(A, rope_interleaved=not A['rope_interleaved']), ids))
        out['rope_base'] = diff(base, forward(W, dict(A, rope_base=10000.0 if A['rope_base'] != 10000.0 else 500.0), ids))
        out['positions'] = diff(base, forward(W, dict(A, positions='none'), ids))   # no rotation at all
    if A['eps'] != 1e-5:
        out['norm_eps'] = diff(base, forward(W, dict(A, eps=1e-5), ids))
    if A['mlp'] in ('gelu', 'gelu_tanh'):
        out['mlp'] = diff(base, forward(W, dict(A, mlp='gelu_tanh' if A['mlp'] == 'gelu' else 'gelu'), ids))
    if A['norm'] == 'rmsnorm':
        out['norm'] = diff(base, forward(W, dict(A, norm='layernorm'), ids))
    if 1 < A['kv_heads'] < A['h']:
        out['kv_heads'] = diff(base, forward(W, A, ids, group=lambda j, h, g: j % g))   # wrong mapping
    out['ablate'] = diff(base, forward(W, A, ids, ablate=((0, 1), (1, 3))))
    for k, v in out.items():
        if k == 'norm_eps' and A['eps'] < 1e-3:
            continue   # Llama's 1e-6 vs 1e-5 is below float32 resolution of these activations: not asserted
        # GELU's tanh form is within 5e-4 of the exact one: its models reach 3-6× the tolerance, not 10×
        need = 2.5 if k == 'mlp' else 10
        assert v > need * TOL['logProbs'], f'option {k} moves the result by only {v}'
    return out


def float32_error(W, A, ids, ablate):
    """The same forward in float32 (the engine's precision) vs float64: must stay 4× inside TOL."""
    W32 = {k: v.to(torch.float32) for k, v in W.items()}
    # the reference reads its working dtype from decoder_reference.F64: float32 for this one forward
    reference.F64, saved = torch.float32, reference.F64
    try:
        l32, a32 = forward(W32, A, ids, ablate)
    finally:
        reference.F64 = saved
    l64, a64 = forward(W, A, ids, ablate)
    e = {'logProbs': (l32.double() - l64).abs().max().item(),
         'attention': max((x.double() - y).abs().max().item() for x, y in zip(a32, a64))}
    for k, v in e.items():
        assert v < TOL[k] / 4, f'float32 error of {k}: {v}'
    return e

