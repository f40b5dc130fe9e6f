// Which build the node suites run on. `npm test` runs every suite on the tier createMHA() picks
// (relaxed-simd: scripts/test.mjs gives Node 20 --experimental-wasm-relaxed-simd) at 2 threads
// (its threaded build), and the golden, property, memory and error suites once more on each other
// tier and on the single-thread relaxed-simd build: scripts/test.mjs runs the suites of
// tier-runs.mjs with MHA_TEST_TIER / MHA_TEST_THREADS set.

/** createMHA options: MHA_TEST_TIER when set (else the automatic choice) and MHA_TEST_THREADS
 * threads (default 2, whatever the machine's core count; the scalar tier has one thread). */
export function tierOptions() {
  const tier = process.env.MHA_TEST_TIER;
  const threads = Number(process.env.MHA_TEST_THREADS ?? 2);
  return tier ? { tier, threads } : { threads };
}
