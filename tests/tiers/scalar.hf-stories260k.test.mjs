// The hf-stories260k cross-check on the scalar tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'scalar';
await import('../hf-stories260k.test.mjs');
