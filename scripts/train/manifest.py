#!/usr/bin/env python3
"""Writes web/lib/models/index.json: the shipped model files with their head count, seed, held-out
loss and size, read from each file's metadata (what the lesson page lists)."""
import json
import struct
from pathlib import Path

models = Path(__file__).resolve().parents[2] / 'web' / 'lib' / 'models'
out = []
for f in sorted(models.glob('*.safetensors')):
    raw = f.read_bytes()
    n = struct.unpack('<Q', raw[:8])[0]
    meta = json.loads(raw[8:8 + n])['__metadata__']
    cfg, tr = json.loads(meta['config']), json.loads(meta['training'])
    out.append({'file': f.name, 'numHeads': cfg['num_heads'], 'numLayers': cfg['num_layers'], 'dModel': cfg['d_model'],
                'seed': tr['seed'], 'steps': tr['steps'], 'heldoutBpc': tr['heldout_bpc'], 'bytes': len(raw)})
json.dump({'format': 'mha-wasm.charlm/1', 'models': out}, open(models / 'index.json', 'w'), indent=1)
print('\n'.join(f"{m['file']}: h = {m['numHeads']}, seed {m['seed']}, {m['heldoutBpc']} bits/char, {m['bytes']} bytes" for m in out))
