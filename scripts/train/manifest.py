#!/usr/bin/env python3
"""Writes web/lib/models/index.json: the shipped trained models with their head count, seed, held-out
loss and size, read from each file's metadata (what the lesson page lists).

`models`: the h = 1 / h = 4 twins (charlm-*.safetensors), as the twins element and the site read
them, each with its position scheme (`positions`: learned or rope). `gqa`: the grouped-query twins
(gqa-*.safetensors), in their own list because the h = 1 / h = 4 comparison of `<mha-twins>` would
take them for more heads of the same experiment; each entry also has kvHeads, positions, dK,
context, parameters and the KV-cache bytes per token (float32: 2 · layers · kv_heads · d_k · 4).
`other`: every other shipped model (stories260K, trained elsewhere), with its size, head and layer
counts and licence file, so that an element can say how much it will fetch before it fetches.
"""
import json
import struct
from pathlib import Path

models = Path(__file__).resolve().parents[2] / 'web' / 'lib' / 'models'


def entry(f):
    raw = f.read_bytes()
    n = struct.unpack('<Q', raw[:8])[0]
    meta = json.loads(raw[8:8 + n])['__metadata__']
    cfg, tr = json.loads(meta['config']), json.loads(meta['training'])
    return cfg, tr, {'file': f.name, 'numHeads': cfg['num_heads'], 'numLayers': cfg['num_layers'], 'dModel': cfg['d_model'],
                     'seed': tr['seed'], 'steps': tr['steps'], 'heldoutBpc': tr['heldout_bpc'], 'bytes': len(raw)}


out = []
for f in sorted(models.glob('charlm-*.safetensors')):
    cfg, tr, e = entry(f)
    e['positions'] = cfg.get('positions', 'learned')
    out.append(e)
gqa = []
for f in sorted(models.glob('gqa-*.safetensors')):
    cfg, tr, e = entry(f)
    dk = cfg['d_model'] // cfg['num_heads']
    kv = cfg.get('kv_heads', cfg['num_heads'])
    e.update({'kvHeads': kv, 'positions': cfg.get('positions', 'learned'), 'dK': dk, 'context': cfg['context'],
              'parameters': tr['parameters'], 'heldoutWindow': tr['heldout_window'], 'seconds': tr['seconds'],
              'kvBytesPerToken': 2 * cfg['num_layers'] * kv * dk * 4})
    gqa.append(e)
gqa.sort(key=lambda e: (-e['kvHeads'], e['seed']))
other = []
for f in sorted(models.glob('*.safetensors')):
    if f.name.startswith(('charlm-', 'gqa-')):
        continue
    raw = f.read_bytes()
    n = struct.unpack('<Q', raw[:8])[0]
    meta = json.loads(raw[8:8 + n])['__metadata__']
    cfg = json.loads(meta['config'])
    e = {'file': f.name, 'numHeads': cfg['num_heads'], 'numLayers': cfg['num_layers'], 'dModel': cfg['d_model'],
         'kvHeads': cfg.get('kv_heads', cfg['num_heads']), 'bytes': len(raw)}
    if (models / (f.stem + '.LICENSE')).exists():
        e['licence'] = f.stem + '.LICENSE'
    other.append(e)
index = {'format': 'mha-wasm.charlm/1', 'models': out}
if gqa:
    index['gqa'] = gqa
if other:
    index['other'] = other
json.dump(index, open(models / 'index.json', 'w'), indent=1)
print('\n'.join(f"{m['file']}: h = {m['numHeads']}, seed {m['seed']}, {m['heldoutBpc']} bits/char, {m['bytes']} bytes" for m in out))
print('\n'.join(f"{m['file']}: h = {m['numHeads']}, h_kv = {m['kvHeads']}, seed {m['seed']}, {m['heldoutBpc']} bits/char, "
                f"{m['kvBytesPerToken']} KV bytes/token, {m['seconds']} s" for m in gqa))
