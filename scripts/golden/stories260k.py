#!/usr/bin/python3
"""Golden cases for stories260K (Karpathy's tinyllamas, MIT; tests/fixtures/stories260K/README.md),
an independent float64 reference for the engine's Llama-architecture decoder.

Usage:  /usr/bin/python3 scripts/golden/stories260k.py
        (needs only numpy: Debian python3-numpy, also pulled in by python3-torch; reads tests/fixtures/stories260K/, or $MHA_STORIES_DIR;
        writes tests/golden-stories260k/cases.json; deterministic: greedy decoding, no sampling)

What it implements, written from the README's description (not from llama2.c's code):
  files     llama2.c "version 0" checkpoint: 7 little-endian int32 (dim, hidden_dim, n_layers,
            n_heads, n_kv_heads, vocab_size, seq_len; vocab_size > 0 = classifier tied to the
            embedding), float32 arrays in README order, then the two RoPE tables (unused: computed
            here). tok512.bin: int32 max_token_length, then per token float32 score, int32 length, bytes.
  encode    llama2.c's: BOS, the dummy-prefix piece " " (when the text is non-empty), each UTF-8
            character's piece or its bytes as ids byte + 3, then repeatedly merge the adjacent pair
            whose concatenation is a piece with the highest score (the leftmost pair on ties).
  forward   float64 from the file's float32 weights; matrices are [out, in] (y = W·x):
              x = emb[id]
              per layer:  h = rmsnorm(x)·w_att;  q = Wq h, k = Wk h, v = Wv h
                          RoPE on q, k: interleaved pairs (2i, 2i+1) of each head rotated by
                          pos·θ_i, θ_i = 10000^(−2i/head_size)                (Su et al. 2021)
                          query head j reads K/V head j // (n_heads / n_kv_heads)    (GQA, 8/4: j // 2)
                          A = softmax(q·kᵀ/√head_size, causal);  x += Wo concat(A·v)
                          h = rmsnorm(x)·w_ffn;  x += w2 (silu(w1 h) ⊙ (w3 h))       (SwiGLU)
              logits = emb · (rmsnorm(x)·w_final);  rmsnorm(x) = x / sqrt(mean(x²) + 1e-5)
  greedy    argmax of the last position's logits, appended, up to 40 new tokens, positions going on
            from the prompt; like llama2.c's generate it stops when the next token is BOS (id 1);
            it does not stop at EOS (id 2), as llama2.c does not.

Output (tests/golden-stories260k/cases.json; floats rounded to 7 significant digits):
  {model, config, reference, cases: [{name, text, ids, logProbs [T][512] (log_softmax of logits),
   attention [layer][head][T][T] (null for the long text, to keep the file small),
   greedy: {ids (new tokens only), text (decode of prompt + new), stoppedAtBOS, margins
   (top-1 minus top-2 log-prob at each step: how close a float32 engine is to a flip)}}],
   encodings: [{text, ids}] (the Python encode on tricky texts: spaces, punctuation, non-ASCII,
   emoji, control characters), tensorSums: {name: [sum, sum of |w|, first value]} in the tensor
   names of docs/trained-models.md (a JS reader must find the same arrays under the same names)}
"""
import hashlib
import json
import math
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
MODEL_DIR = os.environ.get('MHA_STORIES_DIR') or os.path.join(ROOT, 'tests', 'fixtures', 'stories260K')
OUT = os.path.join(ROOT, 'tests', 'golden-stories260k', 'cases.json')
EPS = 1e-5
ROPE_BASE = 10000.0
BOS, EOS = 1, 2


# ---------------------------------------------------------------- files

def read_checkpoint(path):
    """(config dict, weights dict of float64 arrays) from a llama2.c version-0 checkpoint."""
    raw = open(path, 'rb').read()
    dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len = struct.unpack_from('<7i', raw, 0)
    tied = vocab > 0
    vocab = abs(vocab)
    hs = dim // n_heads
    kv_dim = n_kv * hs
    floats = np.frombuffer(raw, dtype='<f4', offset=28)
    shapes = [('emb', (vocab, dim)), ('w_att', (n_layers, dim)), ('wq', (n_layers, dim, dim)),
              ('wk', (n_layers, kv_dim, dim)), ('wv', (n_layers, kv_dim, dim)), ('wo', (n_layers, dim, dim)),
              ('w_ffn', (n_layers, dim)), ('w1', (n_layers, hidden, dim)), ('w2', (n_layers, dim, hidden)),
              ('w3', (n_layers, hidden, dim)), ('w_final', (dim,)),
              ('rope_cos', (seq_len, hs // 2)), ('rope_sin', (seq_len, hs // 2))]
    if not tied:
        shapes.append(('wcls', (vocab, dim)))
    w, off = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape))
        w[name] = floats[off:off + n].astype(np.float64).reshape(shape)
        off += n
    assert off == floats.size, f'file has {floats.size} floats after the header, the header implies {off}'
    if tied:
        w['wcls'] = w['emb']
    cfg = dict(dim=dim, hidden_dim=hidden, n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv,
               vocab_size=vocab, seq_len=seq_len, tied=tied)
    return cfg, w


def read_tokenizer(path, vocab_size):
    """(pieces as bytes, scores as floats) from a tok512.bin-format file."""
    raw = open(path, 'rb').read()
    (max_len,) = struct.unpack_from('<i', raw, 0)
    off, pieces, scores = 4, [], []
    for _ in range(vocab_size):
        score, n = struct.unpack_from('<fi', raw, off)
        off += 8
        pieces.append(raw[off:off + n])
        scores.append(score)
        off += n
    assert off == len(raw), f'tokenizer: {len(raw) - off} trailing bytes'
    assert max(len(p) for p in pieces) <= max_len
    return pieces, scores


# ---------------------------------------------------------------- tokenizer

class Tokenizer:
    def __init__(self, pieces, scores):
        self.pieces, self.scores = pieces, scores
        self.ids = {}
        for i, p in enumerate(pieces):
            self.ids.setdefault(p, i)   # first id of a piece (the file has no duplicates)

    def encode(self, text, bos=True):
        ids = [BOS] if bos else []
        if text:
            ids.append(self.ids[b' '])   # the dummy prefix: words inside a text start with a space
        for ch in text:                   # one Unicode character = one UTF-8 sequence
            b = ch.encode('utf-8')
            ids.extend([self.ids[b]] if b in self.ids else [x + 3 for x in b])
        while True:                       # merge the best pair until none is a piece
            best, best_i = None, -1
            for i in range(len(ids) - 1):
                j = self.ids.get(self.pieces[ids[i]] + self.pieces[ids[i + 1]])
                if j is not None and (best is None or self.scores[j] > self.scores[best]):
                    best, best_i = j, i   # strict >: the leftmost pair wins a tie
            if best is None:
                return ids
            ids[best_i:best_i + 2] = [best]

    def decode(self, ids):
        out = bytearray()
        for k, i in enumerate(ids):
            if i in (0, BOS, EOS):
                continue
            p = self.pieces[i]
            if k > 0 and ids[k - 1] == BOS and p.startswith(b' '):
                p = p[1:]
            if len(p) == 6 and p.startswith(b'<0x') and p.endswith(b'>'):
                p = bytes([int(p[3:5], 16)])
            out += p
        return out.decode('utf-8', errors='replace')


# ---------------------------------------------------------------- forward

def rmsnorm(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w


def rope(x, n_heads, hs):
    """x [T, n_heads·hs]: rotate pairs (2i, 2i+1) of each head by pos·10000^(−2i/hs)."""
    T = x.shape[0]
    x = x.reshape(T, n_heads, hs // 2, 2)
    theta = ROPE_BASE ** (-2.0 * np.arange(hs // 2) / hs)
    ang = np.arange(T)[:, None] * theta[None, :]            # [T, hs/2]
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = x[..., 0], x[..., 1]
    return np.stack([a * c - b * s, a * s + b * c], axis=-1).reshape(T, n_heads * hs)


def forward(cfg, w, ids):
    """(log-probs [T, V], attention [L, H, T, T]) for token ids."""
    d, H, G = cfg['dim'], cfg['n_heads'], cfg['n_kv_heads']
    hs = d // H
    T = len(ids)
    x = w['emb'][ids].copy()
    causal = np.triu(np.ones((T, T), dtype=bool), 1)
    attn = np.zeros((cfg['n_layers'], H, T, T))
    for l in range(cfg['n_layers']):
        h = rmsnorm(x, w['w_att'][l])
        q = rope(h @ w['wq'][l].T, H, hs)
        k = rope(h @ w['wk'][l].T, G, hs)
        v = h @ w['wv'][l].T
        heads = []
        for j in range(H):
            g = j // (H // G)
            s = q[:, j * hs:(j + 1) * hs] @ k[:, g * hs:(g + 1) * hs].T / math.sqrt(hs)
            s[causal] = -np.inf
            s = np.exp(s - s.max(axis=1, keepdims=True))
            a = s / s.sum(axis=1, keepdims=True)
            attn[l, j] = a
            heads.append(a @ v[:, g * hs:(g + 1) * hs])
        x = x + np.concatenate(heads, axis=1) @ w['wo'][l].T
        h = rmsnorm(x, w['w_ffn'][l])
        gate = h @ w['w1'][l].T
        x = x + ((gate / (1 + np.exp(-gate))) * (h @ w['w3'][l].T)) @ w['w2'][l].T
    logits = rmsnorm(x, w['w_final']) @ w['wcls'].T
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    return logp, attn


def greedy(cfg, w, ids, steps):
    """New ids (stops before a BOS, as llama2.c) and top-1 − top-2 log-prob margins."""
    ids, new, margins, stopped = list(ids), [], [], False
    for _ in range(steps):
        if len(ids) >= cfg['seq_len']:
            break
        lp = forward(cfg, w, ids)[0][-1]
        order = np.argsort(-lp, kind='stable')
        nxt = int(order[0])
        if nxt == BOS:
            stopped = True
            break
        margins.append(float(lp[order[0]] - lp[order[1]]))
        new.append(nxt)
        ids.append(nxt)
    return new, margins, stopped


# ---------------------------------------------------------------- output

def r7(a):
    """Nested lists of floats rounded to 7 significant digits."""
    if isinstance(a, np.ndarray):
        a = a.tolist()
    if isinstance(a, list):
        return [r7(v) for v in a]
    return float(f'{a:.7g}')


ENCODINGS = ['Once upon a time', ' leading space', 'two  spaces and a tab\t.', 'Hello, World! 123',
             '"Quotes" and (brackets) [x] {y} <s> </s> <0x41>', 'naïve café — résumé', '日本語のテキスト',
             'emoji 🦙🐑 and ZWJ 👩‍👩‍👧', 'control \x00\x01\x1f\x7f chars\n\nnew lines', 'é', '\u200a',
             'The cat sat on the mat. The cat sat on the mat.']


def tensor_sums(cfg, w):
    """[sum, sum |w|, first] of every weight array, in the naming of docs/trained-models.md."""
    out = {'tok_emb.weight': w['emb']}
    for l in range(cfg['n_layers']):
        for name, key in [('ln1.weight', 'w_att'), ('attn.q_proj.weight', 'wq'), ('attn.k_proj.weight', 'wk'),
                          ('attn.v_proj.weight', 'wv'), ('attn.out_proj.weight', 'wo'), ('ln2.weight', 'w_ffn'),
                          ('mlp.gate.weight', 'w1'), ('mlp.proj.weight', 'w2'), ('mlp.up.weight', 'w3')]:
            out[f'layers.{l}.{name}'] = w[key][l]
    out['ln_f.weight'] = w['w_final']
    if not cfg['tied']:
        out['head.weight'] = w['wcls']
    return {k: [float(v.sum()), float(np.abs(v).sum()), float(v.flat[0])] for k, v in out.items()}


def sha256(path):
    return hashlib.sha256(open(path, 'rb').read()).hexdigest()


PROMPTS = [
    ('once', 'Once upon a time', True),
    ('lily-ben', 'Lily and Ben', True),
    ('bos-only', '', True),   # one token: BOS alone, as llama2.c starts without a prompt
    ('long', 'Tom had a red ball. He liked to throw it high in the sky. One day, the ball went over '
             'the fence. Tom was sad. His friend Sue came to help him. "Let\'s find it together!" she said.', False),
]


def main():
    mpath, tpath = os.path.join(MODEL_DIR, 'stories260K.bin'), os.path.join(MODEL_DIR, 'tok512.bin')
    cfg, w = read_checkpoint(mpath)
    tok = Tokenizer(*read_tokenizer(tpath, cfg['vocab_size']))
    print('config', cfg)
    got = tok.encode('Once upon a time')
    assert got == [1, 403, 407, 261, 378], f'encode("Once upon a time") = {got}'
    for _, text, _ in PROMPTS:
        assert tok.decode(tok.encode(text)) == text, text
    cases = []
    for name, text, with_attention in PROMPTS:
        ids = tok.encode(text)
        logp, attn = forward(cfg, w, ids)
        new, margins, stopped = greedy(cfg, w, ids, 40)
        out = tok.decode(ids + new)
        print(f'[{name}] T={len(ids)} greedy{" (stopped at BOS)" if stopped else ""}: {out!r}  '
              f'min margin {min(margins):.4f}' if margins else '')
        cases.append(dict(name=name, text=text, ids=ids, logProbs=r7(logp),
                          attention=r7(attn) if with_attention else None,
                          greedy=dict(steps=40, ids=new, text=out, stoppedAtBOS=stopped, margins=r7(margins))))
    want = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day,'
    if not cases[0]['greedy']['text'].startswith(want):
        sys.exit(f'greedy text differs from llama2.c README\'s:\n  got  {cases[0]["greedy"]["text"]!r}\n  want {want!r}...')
    doc = dict(
        model=dict(files={'stories260K.bin': sha256(mpath), 'tok512.bin': sha256(tpath)},
                   source='tests/fixtures/stories260K (Karpathy, tinyllamas, MIT)'),
        config=cfg,
        reference='scripts/golden/stories260k.py: numpy float64 forward from the float32 weights; '
                  'floats rounded to 7 significant digits',
        cases=cases,
        encodings=[dict(text=t, ids=tok.encode(t)) for t in ENCODINGS],
        tensorSums=tensor_sums(cfg, w))
    for e in doc['encodings']:
        assert tok.decode(e['ids']) == e['text'], e
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        json.dump(doc, f, separators=(',', ':'))
        f.write('\n')
    print('wrote', OUT, os.path.getsize(OUT), 'bytes')


if __name__ == '__main__':
    main()
