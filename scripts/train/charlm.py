"""The lesson's character-level transformer, its corpus, its safetensors export and its head analysis.

Everything here follows docs/trained-models.md, the contract with the JS model runner
(web/lib/src/formats/charlm.js): tensor names, the pre-LayerNorm architecture, the loss in bits per character
and the head scores. Run with Debian's /usr/bin/python3 (PyTorch 1.13, CPU).
"""
import json
import math
import random
import re
import struct
from pathlib import Path

import torch
from torch import nn

FORTUNE_DIR = Path('/usr/share/games/fortunes')
# ascii-art is pictures, not prose; the others are English text.
SKIP = {'ascii-art'}
FORMAT = 'mha-wasm.charlm/1'


def load_corpus(seed=1234, heldout_fraction=0.05):
    """Fortunes from Debian's `fortunes` package, one string each, whitespace collapsed, printable ASCII.

    Returns (train_text, heldout_text, files): the fortunes are shuffled with `seed` and the last
    `heldout_fraction` of them are held out; each split is the fortunes joined by a newline.
    """
    fortunes, files = [], []
    for path in sorted(FORTUNE_DIR.iterdir()):
        if path.suffix or path.name in SKIP or not path.is_file():
            continue
        files.append(path.name)
        text = path.read_text(encoding='latin-1')
        for item in re.split(r'\n%\n', text):
            item = re.sub(r'\s+', ' ', item).strip()
            item = ''.join(ch for ch in item if 32 <= ord(ch) < 127)
            if len(item) >= 20:
                fortunes.append(item)
    rng = random.Random(seed)
    rng.shuffle(fortunes)
    n_held = int(len(fortunes) * heldout_fraction)
    return '\n'.join(fortunes[:-n_held]), '\n'.join(fortunes[-n_held:]), files


class MLP(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.fc = nn.Linear(d, f)
        self.proj = nn.Linear(f, d)

    def forward(self, x):
        return self.proj(torch.relu(self.fc(x)))


def rope(x, base=10000.0):
    """Rotary positions (Su et al. 2021) on x [B, n, T, dk] at positions 0..T-1, halves layout (the
    format's default, GPT-NeoX / Hugging Face Llama): pair i is (x[i], x[i + dk/2]), angle t * base^(-2i/dk)."""
    T, dk = x.shape[-2], x.shape[-1]
    i = torch.arange(dk // 2, dtype=torch.float64)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * (base ** (-2 * i / dk))[None, :]
    cos, sin = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
    a, b = x[..., :dk // 2], x[..., dk // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class Attention(nn.Module):
    """Causal self-attention with separate projections (the format's `attn.q_proj` form): h query heads,
    kv_heads K/V heads (grouped-query attention, Ainslie et al. 2023: query head j reads K/V head
    j // (h / kv_heads)), optional rotary positions on Q and K. torch.nn.MultiheadAttention has no GQA."""

    def __init__(self, d, h, kv_heads, positions, rope_base):
        super().__init__()
        assert d % h == 0 and h % kv_heads == 0
        self.h, self.g, self.dk = h, kv_heads, d // h
        self.positions, self.rope_base = positions, rope_base
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, kv_heads * self.dk)
        self.v_proj = nn.Linear(d, kv_heads * self.dk)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x, mask, need_weights=False):
        B, T, d = x.shape
        q = self.q_proj(x).view(B, T, self.h, self.dk).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.g, self.dk).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.g, self.dk).transpose(1, 2)
        if self.positions == 'rope':
            q, k = rope(q, self.rope_base), rope(k, self.rope_base)
        if self.g != self.h:
            k = k.repeat_interleave(self.h // self.g, dim=1)
            v = v.repeat_interleave(self.h // self.g, dim=1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(self.dk)
        w = torch.softmax(s.masked_fill(mask, float('-inf')), dim=-1)
        o = (w @ v).transpose(1, 2).reshape(B, T, d)
        return self.out_proj(o), (w if need_weights else None)


def uses_qkv(cfg):
    """Whether a config needs the separate-projection attention (rope or kv_heads given)."""
    return cfg.get('positions', 'learned') != 'learned' or 'kv_heads' in cfg


class Block(nn.Module):
    """x = x + MHA(LN1(x)) (causal); x = x + MLP(LN2(x))."""

    def __init__(self, d, h, f, eps, cfg=None):
        super().__init__()
        cfg = cfg or {}
        self.ln1 = nn.LayerNorm(d, eps=eps)
        self.qkv = uses_qkv(cfg)
        if self.qkv:
            self.attn = Attention(d, h, cfg.get('kv_heads', h), cfg.get('positions', 'learned'),
                                  cfg.get('rope_base', 10000.0))
        else:
            self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.ln2 = nn.LayerNorm(d, eps=eps)
        self.mlp = MLP(d, f)

    def forward(self, x, mask, need_weights=False):
        a = self.ln1(x)
        if self.qkv:
            y, w = self.attn(a, mask, need_weights)
        else:
            y, w = self.attn(a, a, a, attn_mask=mask, need_weights=need_weights, average_attn_weights=False)
        x = x + y
        return x + self.mlp(self.ln2(x)), w


class CharLM(nn.Module):
    """Pre-LayerNorm decoder over characters (docs/trained-models.md, "Architecture")."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        d = cfg['d_model']
        self.tok_emb = nn.Embedding(cfg['vocab_size'], d)
        # The options of docs/trained-models.md this class implements: positions (learned | rope, halves
        # layout), kv_heads, with LayerNorm, a ReLU MLP and biases (norm, mlp, bias at their defaults).
        assert cfg.get('norm', 'layernorm') == 'layernorm' and cfg.get('mlp', 'relu') == 'relu'
        assert cfg.get('bias', True) and not cfg.get('tied', False) and not cfg.get('rope_interleaved', False)
        self.learned_positions = cfg.get('positions', 'learned') == 'learned'
        if self.learned_positions:
            self.pos_emb = nn.Embedding(cfg['context'], d)
        self.layers = nn.ModuleList(
            Block(d, cfg['num_heads'], cfg['d_ff'], cfg['ln_eps'], cfg) for _ in range(cfg['num_layers']))
        self.ln_f = nn.LayerNorm(d, eps=cfg['ln_eps'])
        self.head = nn.Linear(d, cfg['vocab_size'])

    def forward(self, ids, need_weights=False):
        """ids [B, T] -> (logits [B, T, V], per-layer attention weights [B, h, T, T] or None)."""
        T = ids.shape[1]
        x = self.tok_emb(ids)
        if self.learned_positions:
            x = x + self.pos_emb(torch.arange(T))[None]
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # true = may not attend
        weights = []
        for layer in self.layers:
            x, w = layer(x, mask, need_weights)
            weights.append(w)
        return self.head(self.ln_f(x)), weights


def bits_per_char(logits, ids):
    """Mean of -log2 p(id[t+1] | id[<=t]) over t = 0..T-2 and the batch (the contract's loss)."""
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    nll = -logp.gather(-1, ids[:, 1:, None]).squeeze(-1)
    return nll.mean().item() / math.log(2)


def ablated(model, heads):
    """A copy of model whose listed (layer, head) outputs are zero: their columns of out_proj.weight."""
    import copy
    m = copy.deepcopy(model)
    dk = m.cfg['d_model'] // m.cfg['num_heads']
    with torch.no_grad():
        for layer, head in heads:
            m.layers[layer].attn.out_proj.weight[:, head * dk:(head + 1) * dk] = 0
    return m


# ---- head analysis (docs/trained-models.md, "Head analysis") -----------------------------------
TYPES = [('previous', 'previous-token'), ('twoBack', 'two-back'), ('current', 'current-token'),
         ('first', 'first-token'), ('induction', 'induction')]
TYPE_THRESHOLD = 0.4
BROAD_THRESHOLD = 0.7


def head_scores(model, vocab_index, probes):
    """Scores of every head on the probe strings -> [{layer, head, type, scores}].

    `inductionProse` (only when the probes have `prose_repeat`) is the induction score measured the
    same way on held-out prose spans written twice; it is not one of the label's TYPES.
    """
    L, h = model.cfg['num_layers'], model.cfg['num_heads']
    keys = ['previous', 'twoBack', 'current', 'first', 'induction', 'entropy']
    repeats = [('induction', probes['repeat'], probes['repeat_span'])]
    if 'prose_repeat' in probes:
        keys.append('inductionProse')
        repeats.append(('inductionProse', probes['prose_repeat'], probes['prose_repeat_span']))
    acc = {(l, j): {k: [] for k in keys} for l in range(L) for j in range(h)}
    with torch.no_grad():
        for text in probes['text']:
            _, ws = model(encode(text, vocab_index)[None], need_weights=True)
            T = len(text)
            for l, w in enumerate(ws):
                for j in range(h):
                    A = w[0, j].double()
                    s = acc[(l, j)]
                    for t in range(1, T):
                        s['previous'].append(A[t, t - 1].item())
                        s['current'].append(A[t, t].item())
                        s['first'].append(A[t, 0].item())
                        row = A[t, :t + 1]
                        ent = -(row * torch.log2(row.clamp_min(1e-30))).sum().item()
                        s['entropy'].append(ent / math.log2(t + 1))
                        if t >= 2:
                            s['twoBack'].append(A[t, t - 2].item())
        for key, texts, n in repeats:
            for text in texts:
                _, ws = model(encode(text, vocab_index)[None], need_weights=True)
                for l, w in enumerate(ws):
                    for j in range(h):
                        A = w[0, j].double()
                        for t in range(n, 2 * n - 1):
                            acc[(l, j)][key].append(A[t, t - n + 1].item())
    out = []
    for (l, j), s in acc.items():
        scores = {k: sum(v) / len(v) if v else 0.0 for k, v in s.items()}
        out.append({'layer': l, 'head': j, 'type': label(scores), 'scores': scores})
    return out


def make_probes(held_text, letters, context, prose=True, seed=4242):
    """The probes of the head analysis: 8 held-out passages of `context` characters, 8 random-letter
    spans of 24 written twice and (prose) 16 held-out prose spans of 24 written twice, each span
    inside one fortune (no line break). One random sequence (seed) draws them in that order, so the
    first two kinds are the same whether or not the prose probes are made."""
    import random
    prng = random.Random(seed)
    text = []
    for _ in range(8):
        s = prng.randrange(len(held_text) - context)
        text.append(held_text[s:s + context])
    span = 24
    repeat = []
    for _ in range(8):
        sp = ''.join(prng.choice(letters) for _ in range(span))
        repeat.append(sp + sp)
    probes = {'text': text, 'repeat': repeat, 'repeat_span': span}
    if prose:
        prose_repeat = []
        while len(prose_repeat) < 16:
            s = prng.randrange(len(held_text) - span)
            sp = held_text[s:s + span]
            if '\n' not in sp:
                prose_repeat.append(sp + sp)
        probes.update({'prose_repeat': prose_repeat, 'prose_repeat_span': span})
    return probes


def label(scores):
    key, name = max(TYPES, key=lambda kv: scores[kv[0]])
    if scores[key] >= TYPE_THRESHOLD:
        return name
    return 'broad' if scores['entropy'] >= BROAD_THRESHOLD else 'mixed'


def encode(text, vocab_index):
    unk = vocab_index[None]
    return torch.tensor([vocab_index.get(ch, unk) for ch in text], dtype=torch.long)


# ---- safetensors ------------------------------------------------------------------------------
def save_safetensors(path, tensors, metadata):
    """Writes the safetensors format: u64 LE header length, JSON header, raw little-endian data.

    tensors: name -> torch tensor (float16 or float32, contiguous); metadata: str -> str.
    """
    dtypes = {torch.float16: 'F16', torch.float32: 'F32'}
    header, blobs, offset = {'__metadata__': metadata}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = t.numpy().astype(t.numpy().dtype.newbyteorder('<')).tobytes()
        header[name] = {'dtype': dtypes[t.dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    hjson = json.dumps(header, separators=(',', ':')).encode()
    hjson += b' ' * (-len(hjson) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(hjson)))
        f.write(hjson)
        for raw in blobs:
            f.write(raw)


def load_safetensors(path):
    """Reads a file written by save_safetensors -> (name -> float32 tensor, metadata dict)."""
    import numpy as np
    raw = open(path, 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop('__metadata__', {})
    base = 8 + n
    out = {}
    for name, e in header.items():
        dt = {'F16': '<f2', 'F32': '<f4'}[e['dtype']]
        a, b = e['data_offsets']
        out[name] = torch.from_numpy(np.frombuffer(raw[base + a:base + b], dtype=dt).astype(np.float32).reshape(e['shape']).copy())
    return out, meta


def load_model(path):
    """A CharLM with the weights of a shipped file, and its metadata (JSON values parsed)."""
    tensors, meta = load_safetensors(path)
    cfg = json.loads(meta['config'])
    model = CharLM(cfg)
    model.load_state_dict(tensors)
    model.eval()
    return model, {k: (json.loads(v) if k != 'format' else v) for k, v in meta.items()}
