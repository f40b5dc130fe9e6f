// The hf-stories260k cross-check on the single-thread relaxed-simd build (see tests/helpers/tier.mjs).
process.env.MHA_TEST_THREADS = '1';
await import('../hf-stories260k.test.mjs');
