// The hf-stories260k cross-check on the simd tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'simd';
await import('../hf-stories260k.test.mjs');
