#!/usr/bin/env python3
"""Adds the prose probes to a shipped model trained before they existed, and its head table's
inductionProse: the weights stay byte for byte; the probes and heads metadata are rewritten.

    /usr/bin/python3 scripts/train/prose_probes.py web/lib/models/charlm-h4-s0.safetensors

The probes are drawn as train.py draws them (charlm.make_probes), and the file's own text and
letter probes must come out the same, which checks that the corpus and the draw are unchanged.
"""
import json
import sys

import torch

import charlm

torch.set_num_threads(1)
path = sys.argv[1]
tensors, meta = charlm.load_safetensors(path)
model, parsed = charlm.load_model(path)
_, held_text, _ = charlm.load_corpus()
vocab = parsed['vocab']
index = {ch: i for i, ch in enumerate(vocab[:-1])}
index[None] = len(vocab) - 1
letters = [ch for ch in vocab[:-1] if ch.isalpha() or ch == ' ']
old = parsed['probes']
probes = charlm.make_probes(held_text, letters, parsed['config']['context'], prose=True)
for k in ('text', 'repeat', 'repeat_span'):
    assert probes[k] == old[k], f'{path}: the {k} probes drawn now differ from those in the file'
heads = charlm.head_scores(model, index, probes)
for new, was in zip(heads, parsed['heads']):
    assert (new['layer'], new['head'], new['type']) == (was['layer'], was['head'], was['type']), (new, was)
meta = dict(meta, probes=json.dumps(probes), heads=json.dumps(heads))
# the shipped float16 tensors, unchanged (load_safetensors widened them to float32 exactly)
charlm.save_safetensors(path, {k: v.half() for k, v in tensors.items()}, meta)
best = max(heads, key=lambda h: h['scores']['inductionProse'])
print(f"{path}: best inductionProse L{best['layer'] + 1}H{best['head'] + 1} {best['scores']['inductionProse']:.2f}")
