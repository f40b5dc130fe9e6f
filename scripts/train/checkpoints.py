"""Training checkpoints of one model in one safetensors file (docs/trained-models.md, "The phase-change checkpoints").

train.py --checkpoints N keeps the float16-rounded weights every --checkpoint-every steps while it
trains; afterwards this module measures each kept checkpoint, picks N of them spread over training
and denser where the measured curves move fastest (the phase change), measures those fully and
writes them into one file whose tensor names carry the step ("step00600.layers.0.ln1.weight").
"""
import json
import math

import torch

import charlm

PREFIX = 'step%05d.'


def copy_losses(model, vocab_index, texts, n):
    """Mean bits per character on the first and second copy of spans of n written twice.

    First copy: the predictions of characters 1..n-1 (character 0 has no context); second copy: of
    characters n+1..2n-1, the ones an induction head can predict (each one's predecessor appeared in
    the first copy; character n, the second copy's first, follows the end of the first copy and is
    left out, as the induction score leaves it out). Returns (first, second).
    """
    first, second = [], []
    with torch.no_grad():
        for text in texts:
            ids = charlm.encode(text, vocab_index)[None]
            logp = torch.log_softmax(model(ids)[0][0].double(), dim=-1)
            nll = [-logp[t, ids[0, t + 1]].item() / math.log(2) for t in range(2 * n - 1)]
            first += nll[0:n - 1]
            second += nll[n:2 * n - 1]
    return sum(first) / len(first), sum(second) / len(second)


def summary(model, vocab_index, probes):
    """What the element plots for one checkpoint: the best head's scores and the copy losses."""
    heads = charlm.head_scores(model, vocab_index, probes)
    first, second = copy_losses(model, vocab_index, probes['repeat'], probes['repeat_span'])
    best = {k: max(h['scores'].get(k, 0.0) for h in heads) for k in ('previous', 'induction', 'inductionProse')}
    return heads, {'firstCopyBpc': first, 'secondCopyBpc': second, **{k: best[k] for k in best}}


def select(steps, curves, n):
    """Indices of n of the candidates (steps, ascending), the first and last always: equally spaced
    along the length of the path (step / last step, each curve scaled to its range), so that they
    are denser where the curves change fastest."""
    pts = []
    for i, s in enumerate(steps):
        row = [s / steps[-1]]
        for c in curves:
            lo, hi = min(c), max(c)
            row.append((c[i] - lo) / (hi - lo) if hi > lo else 0.0)
        pts.append(row)
    arc = [0.0]
    for a, b in zip(pts, pts[1:]):
        arc.append(arc[-1] + math.dist(a, b))
    chosen = []
    for k in range(n):
        target = arc[-1] * k / (n - 1)
        free = [i for i in range(len(steps)) if i not in chosen]
        chosen.append(min(free, key=lambda i: (abs(arc[i] - target), i)))
    return sorted(chosen)


def heldout_bpc(model, held_ids, window, chars):
    """Held-out bits per character on the first `chars` characters in windows of `window`."""
    n = min(len(held_ids), chars) // window
    windows = held_ids[:n * window].view(n, window)
    with torch.no_grad():
        return sum(charlm.bits_per_char(model(windows[i:i + 64])[0], windows[i:i + 64]) * len(windows[i:i + 64])
                   for i in range(0, n, 64)) / n


def write(path, model, kept, n, vocab_index, probes, held_ids, window, held_chars, metadata):
    """Measures the kept (step, float16 state dict) pairs, picks n and writes them to path.

    metadata: the file's other entries (format, config, vocab, training, probes); `heads` becomes
    the last checkpoint's analysis and `checkpoints` the list of what each one measured.
    """
    steps = [s for s, _ in kept]
    quick = []
    for _, sd in kept:
        model.load_state_dict({k: v.float() for k, v in sd.items()})
        quick.append(summary(model, vocab_index, probes)[1])
    curves = [[q['induction'] for q in quick], [q['secondCopyBpc'] for q in quick], [q['previous'] for q in quick]]
    chosen = select(steps, curves, n)
    tensors, table = {}, []
    for i in chosen:
        step, sd = kept[i]
        model.load_state_dict({k: v.float() for k, v in sd.items()})
        heads, best = summary(model, vocab_index, probes)
        heads = [{**h, 'scores': {k: round(v, 4) for k, v in h['scores'].items()}} for h in heads]
        table.append({'step': step, 'heldoutBpc': round(heldout_bpc(model, held_ids, window, held_chars), 4),
                      **{k: round(v, 4) for k, v in best.items()}, 'heads': heads})
        for k, v in sd.items():
            tensors[PREFIX % step + k] = v
        print('checkpoint step %5d: held-out %.3f, copy 1 %.2f copy 2 %.2f bits/char, previous %.2f induction %.2f '
              'prose %.2f' % (step, table[-1]['heldoutBpc'], best['firstCopyBpc'], best['secondCopyBpc'],
                              best['previous'], best['induction'], best['inductionProse']), flush=True)
    meta = dict(metadata)
    meta['heads'] = json.dumps(table[-1]['heads'])
    meta['checkpoints'] = json.dumps(table)
    charlm.save_safetensors(path, tensors, meta)
    return table
