// The teaching logic of <mha-gqa-twins>, pure (no DOM, no Lit; tested in Node by
// tests/gqa-twins-logic.test.mjs on the shipped manifest and models): what a number of K/V heads is
// called, which twins of a manifest a seed shows, and one twin's row (its loss on the page's
// passages beside its KV-cache bytes per token).
import { heldoutLoss } from './trained-text.js';

/**
 * What a number of K/V heads is called, for h query heads.
 * @param {number} g K/V heads
 * @param {number} h query heads
 * @returns {'multi-head'|'multi-query'|'grouped-query'}
 */
export function kvName(g, h) {
  return g === h ? 'multi-head' : g === 1 ? 'multi-query' : 'grouped-query';
}

/**
 * The twins of a models manifest (its `gqa` list) for one seed: those shown (`mine`), the other
 * seeds' (scored too with `bothSeeds`), and every seed listed.
 * @param {{gqa?: Array<{file: string, seed: number}>}} manifest
 * @param {number} seed
 * @param {boolean} bothSeeds
 * @param {string} base the manifest's URL, for the message
 * @returns {{list: object[], mine: object[], others: object[], seeds: number[]}}
 * @throws {Error} naming the manifest and the seeds it has, when no twin has this seed
 */
export function pickTwins(manifest, seed, bothSeeds, base) {
  const list = (manifest?.gqa ?? []).filter((m) => m && m.file);
  const mine = list.filter((m) => m.seed === seed);
  if (!mine.length) {
    throw new Error(`${base} lists no grouped-query twins with seed ${seed} (its "gqa" list has ${list.length
      ? `seeds ${[...new Set(list.map((m) => m.seed))].join(', ')}` : 'no model'})`);
  }
  const seeds = [...new Set(list.map((m) => m.seed))].sort((a, b) => a - b);
  return { list, mine, others: bothSeeds ? list.filter((m) => m.seed !== seed) : [], seeds };
}

/**
 * The passages a twin stores (its `__metadata__.probes`), or null.
 * @param {{metadata: object}} lm a CharModel
 * @returns {string[]|null}
 */
export function storedProbes(lm) {
  return lm.metadata.probes ? JSON.parse(lm.metadata.probes).text : null;
}

/**
 * One twin's row: its manifest entry, K/V and query heads, its KV cache's bytes per token (as
 * given, from the KV-bytes formula of its config) and with one K/V head per query head, and its
 * mean loss on the passages (bits per character, heldoutLoss), and the size of the whole held-out set
 * it was measured on at training (`heldoutChars`, characters, from its training record; null if absent).
 * @param {object} entry the manifest's entry
 * @param {object} lm the loaded CharModel
 * @param {string[]} probes the passages
 * @param {{perToken: number, fullPerToken: number}} kv the cache's bytes per token for its config
 * @returns {object} `{...entry, kvHeads, numHeads, live, perToken, fullPerToken, heldoutChars}`
 */
export function twinRow(entry, lm, probes, kv) {
  const c = lm.config;
  return { ...entry, kvHeads: c.kvHeads ?? c.numHeads, numHeads: c.numHeads, live: heldoutLoss(lm, probes),
    perToken: kv.perToken, fullPerToken: kv.fullPerToken, heldoutChars: lm.training?.heldout_chars ?? null };
}
