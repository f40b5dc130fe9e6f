// The property suite of invalid calls on the simd tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'simd';
await import('../property-invalid.test.mjs');
