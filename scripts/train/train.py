#!/usr/bin/env python3
"""Trains one of the lesson's character-level models and writes it as safetensors.

    /usr/bin/python3 scripts/train/train.py --heads 4 --seed 0 --out web/lib/models/charlm-h4-s0.safetensors

Deterministic for a given seed, thread count and PyTorch build. A curriculum mixes windows of
fortune text with windows made of one span repeated (a random string or a span of the corpus):
predicting the second copy is what makes induction heads worth learning (Olsson et al. 2022).
The weights are rounded to float16 for shipping, and every figure written into the file
(held-out loss, head scores) is measured with the rounded weights.
"""
import argparse
import json
import random
import time

import torch

import charlm
import checkpoints

p = argparse.ArgumentParser()
p.add_argument('--heads', type=int, default=4)
p.add_argument('--seed', type=int, default=0)
p.add_argument('--steps', type=int, default=2400)
p.add_argument('--batch', type=int, default=32)
p.add_argument('--d-model', type=int, default=96)
p.add_argument('--d-ff', type=int, default=192)
p.add_argument('--layers', type=int, default=2)
p.add_argument('--context', type=int, default=96)
p.add_argument('--lr', type=float, default=3e-3)
p.add_argument('--repeat-fraction', type=float, default=0.3)
p.add_argument('--threads', type=int, default=2)
# Architecture options of docs/trained-models.md (defaults: today's h = 1 / h = 4 models).
p.add_argument('--positions', choices=['learned', 'rope'], default='learned')
p.add_argument('--rope-base', type=float, default=10000.0)
p.add_argument('--kv-heads', type=int, default=None, help='grouped-query attention: K/V heads (default: --heads)')
p.add_argument('--match-params', action='store_true',
               help='widen d_ff so the parameter count equals that of the same model with kv_heads = heads')
# Curriculum for induction on prose: windows of corpus text in which a span of the same window is
# written again (right after itself, or after a gap), as well as the repeated windows above.
p.add_argument('--copy-fraction', type=float, default=0.0)
p.add_argument('--copy-span', type=int, nargs=2, default=[8, 48], help='min and max span length')
p.add_argument('--copy-gap', type=int, default=0, help='max characters between a span and its copy')
p.add_argument('--copies', type=int, default=1, help='max copied spans per window')
p.add_argument('--copy-on-top', action='store_true',
               help='--repeat-fraction and --copy-fraction are both shares of all windows (default: the '
               'repeats are a share of the windows that are not copy windows)')
# Two-phase curriculum: from step --late-step on, the repeat and copy shares change (e.g. many
# repeats until the induction heads have formed, then more text so the language model recovers).
p.add_argument('--late-step', type=int, default=0, help='step from which the --late-* shares apply (0: never)')
p.add_argument('--late-repeat-fraction', type=float, default=None)
p.add_argument('--late-copy-fraction', type=float, default=None)
p.add_argument('--late-letters-fraction', type=float, default=0.5,
               help='from --late-step on, the share of repeated windows that are random letters (before: 0.5)')
p.add_argument('--eval-window', type=int, default=96, help='window of the held-out loss')
p.add_argument('--watch', type=int, default=0, help='every this many steps, print the best induction scores '
               'on a few prose and letter repeats (printing only: the training is the same)')
p.add_argument('--checkpoints', type=int, default=0,
               help='write N training checkpoints (float16, denser where the head scores and the second-copy loss '
               'change fastest) into --out instead of the final weights alone (checkpoints.py)')
p.add_argument('--checkpoint-every', type=int, default=25, help='steps between the checkpoints kept to choose from')
p.add_argument('--out', required=True)
args = p.parse_args()
if args.late_step and (args.late_repeat_fraction is None or args.late_copy_fraction is None):
    p.error('--late-step needs --late-repeat-fraction and --late-copy-fraction')

torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)
rng = random.Random(args.seed)

train_text, held_text, files = charlm.load_corpus()
vocab = sorted(set(train_text))
cfg = {'vocab_size': len(vocab) + 1, 'd_model': args.d_model, 'num_heads': args.heads,
       'num_layers': args.layers, 'd_ff': args.d_ff, 'context': args.context, 'ln_eps': 1e-5,
       'unk': len(vocab)}
if args.positions != 'learned' or args.kv_heads is not None:
    cfg.update({'norm': 'layernorm', 'mlp': 'relu', 'bias': True, 'positions': args.positions,
                'kv_heads': args.kv_heads or args.heads, 'tied': False})
    if args.positions == 'rope':
        cfg.update({'rope_base': args.rope_base, 'rope_interleaved': False})
    if args.match_params:
        def n_params(c):
            return sum(p.numel() for p in charlm.CharLM(c).parameters())
        ref = n_params({**cfg, 'kv_heads': args.heads})
        cfg['d_ff'] += round((ref - n_params(cfg)) / (args.layers * (2 * args.d_model + 1)))
vocab_list = vocab + ['\ufffd']
index = {ch: i for i, ch in enumerate(vocab)}
index[None] = cfg['unk']
letters = [ch for ch in vocab if ch.isalpha() or ch == ' ']
C = args.context
train_ids = charlm.encode(train_text, index)


def repeated_window(n_total, letters_fraction=0.5):
    """One span repeated to fill the window: a random string (letters_fraction of the time) or a corpus span."""
    n = rng.randint(8, 32)
    if rng.random() < letters_fraction:
        span = ''.join(rng.choice(letters) for _ in range(n))
    else:
        s = rng.randrange(len(train_text) - n)
        span = train_text[s:s + n]
    lead = rng.randint(0, n - 1)  # the first copy starts at a random phase
    text = (span * (n_total // n + 2))[lead:lead + n_total]
    return charlm.encode(text, index)


def copy_window(n_total):
    """Corpus text in which 1..copies spans of the window (copy_span characters) are written again,
    after a gap of 0..copy_gap characters of the text that follows them."""
    s = rng.randrange(len(train_text) - 2 * n_total)
    text = train_text[s:s + 2 * n_total]
    for _ in range(rng.randint(1, args.copies)):
        n = rng.randint(*args.copy_span)
        g = rng.randint(0, args.copy_gap)
        if n_total - 2 * n - g <= 0:
            continue
        p = rng.randrange(0, n_total - 2 * n - g)
        text = text[:p + n + g] + text[p:p + n] + text[p + n + g:]
    return charlm.encode(text[:n_total], index)


def batch(step):
    late = args.late_step and step >= args.late_step
    repeat_fraction = args.late_repeat_fraction if late else args.repeat_fraction
    copy_fraction = args.late_copy_fraction if late else args.copy_fraction
    rows = []
    for _ in range(args.batch):
        if args.copy_on_top:
            r = rng.random()
            kind = 'repeat' if r < repeat_fraction else 'copy' if r < repeat_fraction + copy_fraction else 'text'
        elif copy_fraction and rng.random() < copy_fraction:
            kind = 'copy'
        else:
            kind = 'repeat' if rng.random() < repeat_fraction else 'text'
        if kind == 'copy':
            rows.append(copy_window(C + 1))
        elif kind == 'repeat':
            rows.append(repeated_window(C + 1, args.late_letters_fraction if late else 0.5))
        else:
            s = rng.randrange(len(train_ids) - C - 1)
            rows.append(train_ids[s:s + C + 1])
    return torch.stack(rows)


def watch():
    """Best head's induction on 6 held-out prose and 6 random-letter spans of 24 written twice."""
    wr = random.Random(99)
    pr = [held_text[s:s + 24] for s in (wr.randrange(len(held_text) - 24) for _ in range(6))]
    lt = [''.join(wr.choice(letters) for _ in range(24)) for _ in range(6)]
    sc = charlm.head_scores(model, index, {'text': pr, 'repeat': [x + x for x in lt], 'repeat_span': 24,
                                          'prose_repeat': [x + x for x in pr], 'prose_repeat_span': 24})
    prev = [max(h['scores']['previous'] for h in sc if h['layer'] == l) for l in range(args.layers)]
    ids = charlm.encode(held_text[:64 * 96], index).view(64, 96)
    with torch.no_grad():
        held = charlm.bits_per_char(model(ids)[0], ids)
    return (max(h['scores']['induction'] for h in sc), max(h['scores']['inductionProse'] for h in sc),
            ' '.join('%.2f' % x for x in prev), held)


model = charlm.CharLM(cfg)
opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
warm = 100
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: min(1.0, (s + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + torch.cos(torch.tensor(s / args.steps * 3.14159265)).item())))
t0 = time.time()
model.train()
kept = []  # (step, float16 state dict): the candidates of --checkpoints, weights after `step` updates
for step in range(args.steps):
    if args.checkpoints and step % args.checkpoint_every == 0:
        kept.append((step, {k: v.detach().half().clone() for k, v in model.state_dict().items()}))
    ids = batch(step)
    logits, _ = model(ids[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg['vocab_size']), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 200 == 0 or step == args.steps - 1:
        print(f'step {step} loss {loss.item() / 0.6931:.3f} bits/char {time.time() - t0:.0f}s', flush=True)
    if args.watch and step % args.watch == 0 and step:
        tw = time.time()
        model.eval()
        print('  induction letters %.2f prose %.2f; previous-token per layer %s; held-out (first 6,144 '
              'characters) %.3f bits/char' % watch(), flush=True)
        model.train()
        t0 += time.time() - tw  # not training time
seconds = time.time() - t0

# Round to float16 (what ships) and measure everything with the rounded weights.
model.eval()
with torch.no_grad():
    for prm in model.parameters():
        prm.copy_(prm.half().float())

# Held-out loss: non-overlapping windows of eval_window (96) characters of held-out text, the same for
# every model whatever its context.
held_ids = charlm.encode(held_text, index)
W = min(args.eval_window, C) if cfg.get('positions', 'learned') == 'learned' else args.eval_window
windows = held_ids[: (len(held_ids) // W) * W].view(-1, W)
with torch.no_grad():
    bpc = sum(charlm.bits_per_char(model(windows[i:i + 64])[0], windows[i:i + 64]) * len(windows[i:i + 64])
              for i in range(0, len(windows), 64)) / len(windows)

# Probes of the head analysis: held-out text, random spans repeated once and, for the models with
# a copy curriculum or the architecture options, held-out prose spans repeated once.
probes = charlm.make_probes(held_text, letters, C, prose=bool(args.copy_fraction or charlm.uses_qkv(cfg)))
heads = charlm.head_scores(model, index, probes)
for hd in heads:
    sc = ' '.join(f'{k} {v:.2f}' for k, v in hd['scores'].items())
    print(f"layer {hd['layer']} head {hd['head']}: {hd['type']:15s} {sc}")
best = {k: max(hd['scores'].get(k, 0) for hd in heads) for k in ('induction', 'inductionProse')}
print(f'held-out {bpc:.3f} bits/char, {args.steps} steps in {seconds:.0f} s; best induction {best}')

training = {
    'corpus': 'Debian package fortunes (fortune-mod data files: ' + ', '.join(files) + ')',
    'license': 'BSD (fortune-mod); see /usr/share/doc/fortunes/copyright',
    'split': 'fortunes shuffled with seed 1234; last 5 % held out',
    'seed': args.seed, 'steps': args.steps, 'batch': args.batch, 'lr': args.lr,
    'curriculum': (f'{round(args.copy_fraction * 100)} % of training windows are fortune text in which 1-{args.copies} '
                   f'spans of {args.copy_span[0]}-{args.copy_span[1]} characters of the window are written again '
                   f'after a gap of 0-{args.copy_gap} characters; ' + ('' if args.copy_on_top else 'of the others, ')
                   if args.copy_fraction else '')
                  + f'{round(args.repeat_fraction * 100)} % of training windows are one span of 8-32 characters '
                  'repeated (a random string or a span of the corpus); the rest is fortune text'
                  + (f'; from step {args.late_step} on: {round(args.late_repeat_fraction * 100)} % repeats '
                     f'({round(args.late_letters_fraction * 100)} % of them random letters), '
                     f'{round(args.late_copy_fraction * 100)} % copy windows' if args.late_step else ''),
    'seconds': round(seconds, 1), 'threads': args.threads, 'torch': torch.__version__,
    'heldout_bpc': round(bpc, 4), 'heldout_chars': int(windows.numel()),
    **({'heldout_window': W, 'parameters': sum(p.numel() for p in model.parameters())}
       if charlm.uses_qkv(cfg) else {}),
    'weights': 'float16 (all figures measured with the rounded weights)',
}
tensors = {k: v.detach().half() for k, v in model.state_dict().items()}
metadata = {'format': charlm.FORMAT, 'config': json.dumps(cfg), 'vocab': json.dumps(vocab_list),
            'training': json.dumps(training), 'probes': json.dumps(probes), 'heads': json.dumps(heads)}
if args.checkpoints:
    kept.append((args.steps, tensors))
    t1 = time.time()
    training['checkpoints'] = (f'{args.checkpoints} of the {len(kept)} states kept every {args.checkpoint_every} steps '
                               '(and the last), chosen equally spaced along the path of step, best induction score, '
                               'second-copy loss and best previous-token score, each scaled to its range')
    metadata['training'] = json.dumps(training)
    checkpoints.write(args.out, model, kept, args.checkpoints, index, probes, held_ids, W, len(held_ids), metadata)
    print(f'checkpoints measured and written in {time.time() - t1:.0f} s')
else:
    charlm.save_safetensors(args.out, tensors, metadata)
print('wrote', args.out)
