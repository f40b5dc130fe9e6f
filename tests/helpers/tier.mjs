// Which tier the node suites run on. `npm test` runs every suite on the tier createMHA() picks
// (relaxed-simd: scripts/test.mjs gives Node 20 --experimental-wasm-relaxed-simd), and the golden,
// property, memory and error suites once more on each other tier through tests/tiers/, which set
// MHA_TEST_TIER before importing the suite.

/** createMHA options forcing MHA_TEST_TIER when it is set; {} (the automatic choice) otherwise. */
export function tierOptions() {
  const tier = process.env.MHA_TEST_TIER;
  return tier ? { tier } : {};
}
