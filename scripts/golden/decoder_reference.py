"""The float64 reference of the decoder models of the extended file format (docs/trained-models.md,
"Architecture options"), written from the papers and the doc, independent of the engine, the JS
runner and scripts/train/; used by scripts/golden/decoder.py (the golden cases) and
decoder_checks.py (its self-checks).

Reference forward (d = d_model, h = num_heads, g = kv_heads, d_k = d / h; weights stored as
PyTorch's [out, in], so a linear map is y = x·Wᵀ + b; everything in float64 from float32 weights):

  x_t = tok_emb[id_t] (+ pos_emb[t] when positions = "learned")
  per layer l:
    a = Norm(x)                       LayerNorm (Ba et al. 2016): (x − mean)/sqrt(var + eps)·w + b,
                                      biased variance; RMSNorm (Zhang & Sennrich 2019):
                                      x / sqrt(mean(x²) + eps)·w
    Q = a·W_Qᵀ + b_Q [T, h·d_k], K = a·W_Kᵀ + b_K, V = a·W_Vᵀ + b_V [T, g·d_k]
                                      (in_proj form: W_Q, W_K, W_V = rows 0..d, d..2d, 2d..3d)
    Q, K ← RoPE(Q, t), RoPE(K, t)     (positions = "rope"; Su et al. 2021, RoFormer eq. 34) per head,
                                      rotary dim d_k, θ_i = base^(−2i/d_k), angle t·θ_i at position t;
                                      interleaved pairs (x[2i], x[2i+1]) (GPT-J, llama2.c) or halves
                                      (x[i], x[i + d_k/2]) (GPT-NeoX, HF Llama); applied after the bias
    head j: A_j = softmax(Q_j·K_cᵀ/√d_k + causal mask), o_j = A_j·V_c, c = ⌊j / (h/g)⌋
                                      (Vaswani et al. 2017 eq. 1; GQA: Ainslie et al. 2023)
    ablated head j: o_j = 0 (before W_O; A_j is still returned)
    x = x + concat(o)·W_Oᵀ + b_O
    m = Norm(x)
    x = x + proj(act(fc(m)))          relu; gelu exact 0.5·z·(1 + erf(z/√2)) or gelu_tanh
                                      0.5·z·(1 + tanh(√(2/π)(z + 0.044715z³))) (Hendrycks & Gimpel 2016)
      or x + proj(silu(gate(m)) ⊙ up(m))   swiglu (Shazeer 2020), silu(z) = z·σ(z)
  logits = Norm_f(x)·Hᵀ (+ head.bias), H = head.weight, or tok_emb.weight when tied
  logProbs = log_softmax(logits) (natural log); loss = mean over t = 0..T−2 of −log2 p(id_{t+1})
  greedy generation: argmax of the last row of a full forward over the growing text (positions from 0)

bias = false drops the bias of every linear map (attention projections, MLP, head); LayerNorm keeps
its own bias (it is a norm, not a linear map). With swiglu and bias = true the three MLP maps have
"""
import math

import torch

F64 = torch.float64
VOCAB = list('etaoinsrh .?')   # 12 one-character strings; '?' (id 11) is unk
UNK = 11


def f32(t):
    """Rounded to float32 and back: the weights the file stores, exactly."""
    return t.to(torch.float32).to(F64)



def arch(cfg):
    """The architecture a config means (docs/trained-models.md: absent key = default)."""
    return {
        'norm': cfg.get('norm', 'layernorm'),
        'eps': cfg['norm_eps'] if 'norm_eps' in cfg else cfg.get('ln_eps', 1e-5),
        'mlp': cfg.get('mlp', 'relu'),
        'bias': cfg.get('bias', True),
        'positions': cfg.get('positions', 'learned'),
        'rope_base': cfg.get('rope_base', 10000.0),
        'rope_interleaved': cfg.get('rope_interleaved', False),
        'kv_heads': cfg.get('kv_heads', cfg['num_heads']),
        'tied': cfg.get('tied', False),
        'd': cfg['d_model'], 'h': cfg['num_heads'], 'f': cfg['d_ff'], 'V': cfg['vocab_size'],
        'C': cfg['context'], 'L': cfg['num_layers'],
    }



def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def gelu(z):
    return 0.5 * z * (1 + torch.erf(z / math.sqrt(2)))


def gelu_tanh(z):
    return 0.5 * z * (1 + torch.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))


def silu(z):
    return z / (1 + torch.exp(-z))


def relu(z):
    return torch.clamp(z, min=0)


def rope(x, base, interleaved):
    """x [n, T, dk] rotated at positions 0..T−1 (rotary dim = dk)."""
    n, T, dk = x.shape
    i = torch.arange(dk // 2, dtype=F64)
    theta = torch.tensor(base, dtype=F64) ** (-2 * i / dk)
    ang = torch.arange(T, dtype=F64)[:, None] * theta[None, :]    # [T, dk/2]
    cos, sin = torch.cos(ang), torch.sin(ang)
    y = x.clone()
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]
        y[..., 0::2], y[..., 1::2] = a * cos - b * sin, a * sin + b * cos
    else:
        a, b = x[..., :dk // 2], x[..., dk // 2:]
        y[..., :dk // 2], y[..., dk // 2:] = a * cos - b * sin, a * sin + b * cos
    return y


def forward(W, A, ids, ablate=(), group=None):
    """ids [T] → (logProbs [T, V], [attention [h, T, T] per layer]). A: arch(cfg), possibly altered
    (the sensitivity checks); group(j, h, g) the K/V head of query head j (default ⌊j/(h/g)⌋)."""
    d, h, g = A['d'], A['h'], A['kv_heads']
    dk = d // h
    T = len(ids)
    group = group or (lambda j, h, g: j // (h // g))
    lin = lambda x, p: x @ W[p + '.weight'].T + (W[p + '.bias'] if p + '.bias' in W else 0)

    def norm(x, p):
        if A['norm'] == 'layernorm':
            return layer_norm(x, W[p + '.weight'], W.get(p + '.bias', torch.zeros(d, dtype=F64)), A['eps'])
        return rms_norm(x, W[p + '.weight'], A['eps'])

    x = W['tok_emb.weight'][ids]
    if A['positions'] == 'learned':
        x = x + W['pos_emb.weight'][:T]
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    attention = []
    for l in range(A['L']):
        p = f'layers.{l}.'
        a = norm(x, p + 'ln1')
        if p + 'attn.in_proj_weight' in W:
            Wi = W[p + 'attn.in_proj_weight']
            bi = W.get(p + 'attn.in_proj_bias', torch.zeros(3 * d, dtype=F64))
            q, k, v = (a @ Wi[i * d:(i + 1) * d].T + bi[i * d:(i + 1) * d] for i in range(3))
        else:
            q, k, v = (lin(a, p + 'attn.' + n) for n in ('q_proj', 'k_proj', 'v_proj'))
        q = q.view(T, h, dk).transpose(0, 1)          # [h, T, dk]
        k = k.view(T, g, dk).transpose(0, 1)          # [g, T, dk]
        v = v.view(T, g, dk).transpose(0, 1)
        if A['positions'] == 'rope':
            q, k = rope(q, A['rope_base'], A['rope_interleaved']), rope(k, A['rope_base'], A['rope_interleaved'])
        heads, ws = [], []
        for j in range(h):
            c = group(j, h, g)
            s = q[j] @ k[c].T / math.sqrt(dk)
            s = s.masked_fill(causal, -math.inf)
            w = torch.softmax(s, dim=-1)
            o = w @ v[c]
            if (l, j) in ablate:
                o = torch.zeros_like(o)
            heads.append(o)
            ws.append(w)
        attention.append(torch.stack(ws))
        x = x + lin(torch.cat(heads, dim=-1), p + 'attn.out_proj')
        mm = norm(x, p + 'ln2')
        if A['mlp'] == 'swiglu':
            y = lin(silu(lin(mm, p + 'mlp.gate')) * lin(mm, p + 'mlp.up'), p + 'mlp.proj')
        else:
            act = {'relu': relu, 'gelu': gelu, 'gelu_tanh': gelu_tanh}[A['mlp']]
            y = lin(act(lin(mm, p + 'mlp.fc')), p + 'mlp.proj')
        x = x + y
    z = norm(x, 'ln_f')
    Hw = W['tok_emb.weight'] if A['tied'] else W['head.weight']
    logits = z @ Hw.T + (W['head.bias'] if 'head.bias' in W else 0)
    return torch.log_softmax(logits, dim=-1), attention


def bits(logp, ids):
    if len(ids) < 2:
        return None
    return (-logp[:-1].gather(-1, torch.tensor(ids[1:])[:, None]).mean() / math.log(2)).item()


def encode(text):
    return [VOCAB.index(ch) if ch in VOCAB else UNK for ch in text]


def greedy(W, A, prompt, n):
    """n greedy characters after prompt by full forwards; also the smallest top-1/top-2 gap."""
    ids = encode(prompt)
    out, margin = '', math.inf
    for _ in range(n):
        logp, _ = forward(W, A, ids)
        top = torch.topk(logp[-1], 2)
        margin = min(margin, (top.values[0] - top.values[1]).item())
        nxt = top.indices[0].item()
        ids.append(nxt)
        out += VOCAB[nxt]
    return out, margin

