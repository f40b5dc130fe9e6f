// The golden-hf suite on the simd tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'simd';
await import('../golden-hf.test.mjs');
