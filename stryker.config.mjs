// Mutation testing of the JS library (web/lib/src) with StrykerJS: `npm run mutation`.
// Not part of `npm test` (it runs the suites once per mutant). The Node suites that exercise
// web/lib/src run through Stryker's tap runner (node:test prints TAP when its output is not a TTY);
// coverage per test file lets each mutant run only the files that reach it. The browser suites,
// the slow randomized ones (property, fuzz-replay, oom) and the packaging suite are left out.
// Environment: MUTATE=web/lib/src/engine/layer.js,... narrows the files mutated; TESTS=tests/a.test.mjs,...
// narrows the suites run (the dry run executes every listed suite once, so narrowing saves minutes);
// CONCURRENCY sets workers.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { relaxedSimdFlags } from './scripts/node-flags.mjs';

const root = path.dirname(fileURLToPath(import.meta.url));
// absolute paths of the repository's copies: the suites find them from a sandbox wherever it is
process.env.MHA_GOLDEN_DIR ??= path.resolve(root, 'tests/golden');
process.env.MHA_STORIES_DIR ??= path.resolve(root, 'tests/fixtures/stories260K');

const mutate = process.env.MUTATE
  ? process.env.MUTATE.split(',')
  : ['web/lib/src/**/*.js', '!web/lib/src/version.js', 'web/lib/components/logic/*.js'];

export default {
  testRunner: 'tap',
  plugins: ['@stryker-mutator/tap-runner'],
  mutate,
  tap: {
    testFiles: process.env.TESTS ? process.env.TESTS.split(',') : [
      // the value-by-value suites of model.js, decoder.js, bpe.js and llama2c.js first: a second or
      // two each, and they kill most of those files' mutants before the slower suites run
      'tests/model-runner-load.test.mjs', 'tests/model-runner-run.test.mjs', 'tests/model-runner-generate.test.mjs',
      'tests/decoder.test.mjs', 'tests/bpe.test.mjs', 'tests/llama2c-reader.test.mjs',
      'tests/api.test.mjs', 'tests/errors.test.mjs', 'tests/golden.test.mjs', 'tests/memory.test.mjs',
      'tests/leak.test.mjs', 'tests/model.test.mjs', 'tests/contract.test.mjs',
      // heads.js and safetensors.js, value by value and without an engine (tests/safetensors.test.mjs,
      // whose byte-mutation fuzz takes seconds per run, is left out like the other randomized suites)
      'tests/heads.test.mjs', 'tests/heads-text.test.mjs', 'tests/safetensors-reader.test.mjs',
      // the model runner (model.js), the core's decoder (decoder.js) and llama2.c's files and tokenizer
      // (llama2c.js, bpe.js); tests/model-fuzz.test.mjs is left out like the other randomized suites
      'tests/golden-decoder.test.mjs', 'tests/golden-stories260k.test.mjs', 'tests/llama2c.test.mjs',
      // the lesson's pure teaching logic and data (web/lib/components/logic/) and the masks' shapes
      'tests/cost-ledger.test.mjs', 'tests/gqa-verdict.test.mjs', 'tests/gqa-story.test.mjs', 'tests/claims.test.mjs', 'tests/masks.test.mjs',
      'tests/errors-unit.test.mjs', 'tests/safetensors-start.test.mjs', 'tests/safetensors-not-a-model.test.mjs', 'tests/llama2c-unaligned.test.mjs',
      'tests/cost-ledger-units.test.mjs', 'tests/gqa-verdict-cases.test.mjs', 'tests/logic-data.test.mjs', 'tests/kv-cache.test.mjs',
      'tests/stepper-steps.test.mjs', 'tests/trained-logic.test.mjs', 'tests/layer-map-logic.test.mjs', 'tests/component-helpers.test.mjs',
      // the loading paths of lm/model.js and lm/tokenizers.js: Hugging Face folders, tokenizer files, progress;
      // the format modules' checks value by value first (a second each)
      'tests/half.test.mjs', 'tests/hf-config.test.mjs', 'tests/hf-read.test.mjs', 'tests/hf-tokenizer-checks.test.mjs', 'tests/tokenizers.test.mjs', 'tests/file-bytes.test.mjs', 'tests/sources.test.mjs',
      'tests/generator.test.mjs', 'tests/hf-progress.test.mjs', 'tests/hf-tokenizer.test.mjs', 'tests/hf-untrusted.test.mjs',
      'tests/golden-hf.test.mjs', 'tests/hf-stories260k.test.mjs', 'tests/color.test.mjs',
      // the engine's lifecycle base, the core's tables and the forward options
      'tests/lifecycle.test.mjs', 'tests/engine-tables-options.test.mjs', 'tests/head-mask.test.mjs',
    ],
    nodeArgs: [...relaxedSimdFlags(), '--expose-gc', '-r', '{{hookFile}}', '{{testFile}}'],
  },
  coverageAnalysis: 'perTest',
  concurrency: Number(process.env.CONCURRENCY || 2),
  timeoutMS: 60000,
  // generated outputs no Node suite reads (the bundles, the declaration files, the API reference):
  // other builds rewrite them at any time, and a sandbox copied mid-rewrite fails
  ignorePatterns: ['build', 'build-*', '.cache', 'tests/artifacts', 'reports', '*.tgz', '/cpp/*', '!/cpp/include',
    '/web/lib/dist', '/web/site/dist', '/web/lib/types', '/docs/api'],
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  tempDirName: '.stryker-tmp',
};
