// The property suite of invalid calls on the scalar tier (see tests/helpers/tier.mjs).
process.env.MHA_TEST_TIER = 'scalar';
await import('../property-invalid.test.mjs');
