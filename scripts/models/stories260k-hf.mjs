#!/usr/bin/env node
// Exports Karpathy's stories260K (llama2.c checkpoint + tok512.bin, tests/fixtures/stories260K/) to a
// Hugging Face LlamaForCausalLM folder the way Hugging Face's llama2.c conversion does (llama2.c
// export.py `hf_export`, `permute_original`; transformers' convert_llama_weights_to_hf.py `permute`):
// Meta/llama2.c rotate Q and K on interleaved pairs (x[2i], x[2i+1]); Hugging Face's Llama rotates the
// halves (x[i], x[i + d_k/2]) (`rotate_half`), so each head's rows of W_q and W_k are permuted from
// interleaved to halves order — row 2i + s of a head goes to row s·d_k/2 + i — which makes the two
// models compute the same function. Writes config.json, model.safetensors (float32, tied head:
// no lm_head.weight) and tokenizer.json (the SentencePiece-style BPE of tok512.bin: `▁` for spaces,
// byte fallback, merges in the order of the merged piece's score, `<s>` added in front).
//   node scripts/models/stories260k-hf.mjs --out <dir> [--dir tests/fixtures/stories260K]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readLlama2cCheckpoint, readLlama2cTokenizer } from '../../web/lib/src/formats/llama2c.js';
import { encodeSafetensors } from '../safetensors-write.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * W [heads·d_k, in] with each head's rows in interleaved-pair order → halves order (HF Llama).
 * @param {Float32Array} w row-major [heads·dk, cols]
 */
export function permuteInterleavedToHalves(w, heads, dk, cols) {
  const out = new Float32Array(w.length);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < dk / 2; i++) {
      for (let s = 0; s < 2; s++) {
        const from = (h * dk + 2 * i + s) * cols, to = (h * dk + s * (dk / 2) + i) * cols;
        out.set(w.subarray(from, from + cols), to);
      }
    }
  }
  return out;
}

/** The tokenizer.json of a llama2.c tokenizer (pieces with spaces as ' ', bytes as <0xHH>). */
export function tokenizerJson(tok) {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const pieces = tok.pieces.map((p) => utf8.decode(p).replaceAll(' ', '▁'));
  pieces[0] = '<unk>'; pieces[1] = '<s>'; pieces[2] = '</s>';
  const vocab = {};
  pieces.forEach((p, i) => { if (!(p in vocab)) vocab[p] = i; });
  // merges: every split of a piece into two pieces of the vocabulary, ranked by the merged piece's score
  const merges = [];
  pieces.forEach((p, id) => {
    if (id < 3 || /^<0x[0-9A-F]{2}>$/.test(p)) return;
    const chars = Array.from(p);
    for (let k = 1; k < chars.length; k++) {
      const a = chars.slice(0, k).join(''), b = chars.slice(k).join('');
      if (a in vocab && b in vocab) merges.push([tok.scores[id], id, vocab[a], `${a} ${b}`]);
    }
  });
  merges.sort((x, y) => y[0] - x[0] || x[1] - y[1] || x[2] - y[2]);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [0, 1, 2].map((id) => ({ id, content: pieces[id], single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } },
    },
    decoder: {
      type: 'Sequence',
      decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }],
    },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, vocab, merges: merges.map((m) => m[3]) },
  };
}

/** Writes the folder; returns its file names. */
export function exportStories260kHF(dir, out) {
  const { config: c, tensors } = readLlama2cCheckpoint(fs.readFileSync(path.join(dir, 'stories260K.bin')));
  const tok = readLlama2cTokenizer(fs.readFileSync(path.join(dir, 'tok512.bin')), { vocabSize: c.vocab_size });
  const dk = c.d_model / c.num_heads;
  const T = {};
  const put = (name, t) => { T[name] = { data: t.data, shape: t.shape }; };
  put('model.embed_tokens.weight', tensors['tok_emb.weight']);
  put('model.norm.weight', tensors['ln_f.weight']);
  for (let l = 0; l < c.num_layers; l++) {
    const s = (n) => tensors[`layers.${l}.${n}`], p = `model.layers.${l}.`;
    put(`${p}input_layernorm.weight`, s('ln1.weight'));
    put(`${p}post_attention_layernorm.weight`, s('ln2.weight'));
    T[`${p}self_attn.q_proj.weight`] = { data: permuteInterleavedToHalves(s('attn.q_proj.weight').data, c.num_heads, dk, c.d_model), shape: [c.d_model, c.d_model] };
    T[`${p}self_attn.k_proj.weight`] = { data: permuteInterleavedToHalves(s('attn.k_proj.weight').data, c.kv_heads, dk, c.d_model), shape: [c.kv_heads * dk, c.d_model] };
    put(`${p}self_attn.v_proj.weight`, s('attn.v_proj.weight'));
    put(`${p}self_attn.o_proj.weight`, s('attn.out_proj.weight'));
    put(`${p}mlp.gate_proj.weight`, s('mlp.gate.weight'));
    put(`${p}mlp.up_proj.weight`, s('mlp.up.weight'));
    put(`${p}mlp.down_proj.weight`, s('mlp.proj.weight'));
  }
  const config = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: c.d_model, intermediate_size: c.d_ff,
    num_attention_heads: c.num_heads, num_key_value_heads: c.kv_heads, num_hidden_layers: c.num_layers,
    vocab_size: c.vocab_size, max_position_embeddings: c.context, rms_norm_eps: c.norm_eps, rope_theta: c.rope_base,
    hidden_act: 'silu', tie_word_embeddings: c.tied, bos_token_id: 1, eos_token_id: 2, torch_dtype: 'float32',
  };
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'config.json'), JSON.stringify(config, null, 2));
  fs.writeFileSync(path.join(out, 'model.safetensors'), encodeSafetensors({ format: 'pt' }, T));
  fs.writeFileSync(path.join(out, 'tokenizer.json'), JSON.stringify(tokenizerJson(tok)));
  return ['config.json', 'model.safetensors', 'tokenizer.json'];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : dflt; };
  const out = arg('--out');
  if (!out) { console.error('usage: node scripts/models/stories260k-hf.mjs --out <dir> [--dir tests/fixtures/stories260K]'); process.exit(2); }
  const files = exportStories260kHF(path.resolve(root, arg('--dir', 'tests/fixtures/stories260K')), path.resolve(out));
  console.log(`${out}: ${files.join(', ')}`);
}
