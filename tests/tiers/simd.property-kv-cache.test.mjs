// The property suite of the KV cache on the simd tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'simd';
await import('../property-kv-cache.test.mjs');
