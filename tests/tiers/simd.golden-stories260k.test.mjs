// The stories260K golden suite on the simd tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'simd';
await import('../golden-stories260k.test.mjs');
