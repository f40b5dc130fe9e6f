// The property suite of invalid calls on the single-thread relaxed-simd build (see tests/helpers/tier.mjs).
process.env.MHA_TEST_THREADS = '1';
await import('../property-invalid.test.mjs');
