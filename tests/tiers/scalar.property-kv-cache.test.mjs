// The property suite of the KV cache on the scalar tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'scalar';
await import('../property-kv-cache.test.mjs');
