// The golden-hf suite on the single-thread relaxed-simd build (see tests/helpers/tier.mjs).
process.env.MHA_TEST_THREADS = '1';
await import('../golden-hf.test.mjs');
