// The "how" column of <mha-passport>'s count rows: the formula that gives the count printed beside
// it, with every factor the count has (the batch B when the passport is batched, T_q and T_k for
// cross-attention). No DOM and no Lit; tests/passport-counts.test.mjs evaluates each formula with the
// configuration's numbers and compares it with the engine's passport.

/**
 * The formulas of the softmax FLOPs and of the scores held in memory for a passport configuration.
 * The engine counts 6 FLOPs per score (scale, max, subtract, exp counted as one, add, divide) and
 * 1 per score row; one score per query and key, per head and sequence.
 * @param {{batch?: number, keyLen?: number}} cfg the options given to mha.passport (batch
 *   undefined: an unbatched input, counted as one sequence; keyLen undefined: self-attention)
 * @returns {{softmax: string, scores: string}} e.g. "B·h·T·(6·T + 1)" and "B·h·T²"
 */
export function countFormulas(cfg) {
  const B = cfg.batch === undefined ? '' : 'B·';
  if (cfg.keyLen !== undefined) {
    return { softmax: `${B}h·T_q·(6·T_k + 1)`, scores: `${B}h·T_q·T_k` };
  }
  return { softmax: `${B}h·T·(6·T + 1)`, scores: `${B}h·T²` };
}
