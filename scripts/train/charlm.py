"""The lesson's character-level transformer, its corpus, its safetensors export and its head analysis.

Everything here follows docs/trained-models.md, the contract with the JS model runner
(web/lib/src/model.js): tensor names, the pre-LayerNorm architecture, the loss in bits per character
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


class Block(nn.Module):
    """x = x + MHA(LN1(x)) (causal); x = x + MLP(LN2(x))."""

    def __init__(self, d, h, f, eps):
        super().__init__()
        self.ln1 = nn.LayerNorm(d, eps=eps)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.ln2 = nn.LayerNorm(d, eps=eps)
        self.mlp = MLP(d, f)

    def forward(self, x, mask, need_weights=False):
        a = self.ln1(x)
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
        self.pos_emb = nn.Embedding(cfg['context'], d)
        self.layers = nn.ModuleList(
            Block(d, cfg['num_heads'], cfg['d_ff'], cfg['ln_eps']) for _ in range(cfg['num_layers']))
        self.ln_f = nn.LayerNorm(d, eps=cfg['ln_eps'])
        self.head = nn.Linear(d, cfg['vocab_size'])

    def forward(self, ids, need_weights=False):
        """ids [B, T] -> (logits [B, T, V], per-layer attention weights [B, h, T, T] or None)."""
        T = ids.shape[1]
        x = self.tok_emb(ids) + self.pos_emb(torch.arange(T))[None]
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
    """Scores of every head on the probe strings -> [{layer, head, type, scores}]."""
    L, h = model.cfg['num_layers'], model.cfg['num_heads']
    acc = {(l, j): {k: [] for k in ('previous', 'twoBack', 'current', 'first', 'induction', 'entropy')}
           for l in range(L) for j in range(h)}
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
        n = probes['repeat_span']
        for text in probes['repeat']:
            _, ws = model(encode(text, vocab_index)[None], need_weights=True)
            for l, w in enumerate(ws):
                for j in range(h):
                    A = w[0, j].double()
                    for t in range(n, 2 * n - 1):
                        acc[(l, j)]['induction'].append(A[t, t - n + 1].item())
    out = []
    for (l, j), s in acc.items():
        scores = {k: sum(v) / len(v) for k, v in s.items()}
        out.append({'layer': l, 'head': j, 'type': label(scores), 'scores': scores})
    return out


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
