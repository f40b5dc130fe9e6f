#!/usr/bin/env python3
"""Golden cases of the shipped models for the JS runner's tests (tests/golden-models/).

    /usr/bin/python3 scripts/train/golden.py web/lib/models/charlm-h4-s0.safetensors tests/golden-models/charlm-h4-s0.json

PyTorch computes, in float64 from the shipped (float16) weights, for a few texts: the ids, the
log-probabilities [T, V], every layer's per-head attention weights [h, T, T] and the loss in bits
per character; the same with the induction heads switched off; and the head table on the probes.
For the models with the architecture options (rope, kv_heads: the grouped-query twins) also the
lesson's default text, and greedy generation by full forwards (no cache) from a prompt with the
smallest top-2 margin of its steps, for the runner's KV-cache generator to reproduce.
"""
import json
import math
import sys

import torch

import charlm

TEXTS = [
    'A fortune is a short text for a test.',
    'The quick fox naps. The quick fox naps.',
    'ok',
    'caf\u00e9 \u2014 unknown characters map to unk',
]


def r6(x):
    return float(f'{x:.6g}')


def case(model, index, text, ablate=()):
    m = charlm.ablated(model, ablate) if ablate else model
    ids = charlm.encode(text, index)
    with torch.no_grad():
        logits, ws = m(ids[None], need_weights=True)
    logp = torch.log_softmax(logits[0], dim=-1)
    loss = None
    if len(ids) >= 2:
        loss = -logp[:-1].gather(-1, ids[1:, None]).mean().item() / math.log(2)
    return {
        'text': text, 'ablate': [list(p) for p in ablate], 'ids': ids.tolist(),
        'logProbs': [[r6(v) for v in row] for row in logp.tolist()],
        'attention': [[[[r6(v) for v in row] for row in head] for head in w[0].tolist()] for w in ws],
        'loss': loss,
    }


PROSE = 'The cat sat on the mat. The cat sat on the mat.'
PROMPT = 'The cat sat on the mat. The cat'


def greedy(model, index, vocab, prompt, n):
    """n greedy characters after prompt, each from a full forward of the growing text (no cache)."""
    text, margins = prompt, []
    with torch.no_grad():
        for _ in range(n):
            logits, _ = model(charlm.encode(text, index)[None])
            logp = torch.log_softmax(logits[0, -1], dim=-1)
            top = torch.topk(logp, 2)
            margins.append((top.values[0] - top.values[1]).item())
            text += vocab[top.indices[0].item()]
    return {'prompt': prompt, 'text': text, 'minMargin': min(margins)}


def main(src, dst):
    torch.set_num_threads(2)
    model, meta = charlm.load_model(src)
    model = model.double()
    vocab = meta['vocab']
    index = {ch: i for i, ch in enumerate(vocab)}
    index[None] = meta['config']['unk']
    twin = charlm.uses_qkv(model.cfg)
    cases = [case(model, index, t) for t in TEXTS + ([PROSE] if twin else [])]
    induction = [(h['layer'], h['head']) for h in meta['heads'] if h['type'] == 'induction']
    cases.append(case(model, index, TEXTS[1], tuple(induction or [(model.cfg['num_layers'] - 1, 0)])))
    heads = charlm.head_scores(model, index, meta['probes'])
    out = {'model': src, 'cases': cases, 'heads': heads}
    if twin:
        out['greedy'] = greedy(model, index, vocab, PROMPT, 32)
    json.dump(out, open(dst, 'w'), separators=(',', ':'))
    print('wrote', dst, 'ablating', induction)


if __name__ == '__main__':
    main(*sys.argv[1:3])
