// The suites that run again on the other builds, after the main run (scripts/test.mjs): the golden,
// property, memory and error suites on the simd and scalar tiers and on the single-thread
// relaxed-simd build. Each run sets the environment that helpers/tier.mjs reads.

const MAIN = [
  'errors', 'golden', 'golden-decoder', 'golden-hf', 'head-mask', 'hf-stories260k', 'memory',
  'property', 'property-invalid', 'property-kv-cache',
];
/** Suites whose kernels the thread count does not reach: run on the other tiers only. */
const TIERED_ONLY = ['golden-mods', 'golden-stories260k', 'golden-twins', 'property-mods', 'property-rope'];

/** @type {Array<{name: string, env: Record<string, string>, suites: string[]}>} suites by name (tests/<name>.test.mjs) */
export const TIER_RUNS = [
  { name: 'simd', env: { MHA_TEST_TIER: 'simd' }, suites: [...MAIN, ...TIERED_ONLY] },
  { name: 'scalar', env: { MHA_TEST_TIER: 'scalar' }, suites: [...MAIN, ...TIERED_ONLY] },
  { name: 'single', env: { MHA_TEST_THREADS: '1' }, suites: MAIN },
];
