// The property suite of the KV cache on the single-thread relaxed-simd build (see tests/helpers/tier.mjs).
process.env.MHA_TEST_THREADS = '1';
await import('../property-kv-cache.test.mjs');
