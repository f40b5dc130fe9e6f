// The head-mask suite on the simd tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'simd';
await import('../head-mask.test.mjs');
