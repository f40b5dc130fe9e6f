// The golden-hf suite on the scalar tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'scalar';
await import('../golden-hf.test.mjs');
