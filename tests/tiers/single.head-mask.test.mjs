// The head-mask suite on the single-thread relaxed-simd build (see tests/helpers/tier.mjs).
process.env.MHA_TEST_THREADS = '1';
await import('../head-mask.test.mjs');
