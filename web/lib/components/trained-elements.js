// Entry of the trained-model elements' bundle (web/lib/dist/mha-trained.js): the trained-heads
// explorer, the surprisal strip, the induction probe, KV-cache generation, the h = 1 / h = 4 twins,
// the grouped-query story and twins, the model cache they share, and everything mha-components.js exports (the basic
// elements and the JS API).
export { MhaTrainedHeads, explainHeads, modelChoices } from './mha-trained-heads.js';
export { MhaInduction, copyBits } from './mha-induction.js';
export { MhaGenerate } from './mha-generate.js';
export { MhaTwins, heldoutLoss, twinsVerdict } from './mha-twins.js';
export { MhaGqaTwins, gqaVerdict, kvName } from './mha-gqa-twins.js';
export { MhaGqaStory, describeHeads, copyBitsPerToken, storySentence, MAX_STORY_TOKENS } from './mha-gqa-story.js';
export { DEFAULT_MODEL_URL, DEFAULT_STORIES_URL, MODEL_INDEX_URL, acquireModel, releaseModel, loadedModelCount } from './models.js';
export * from './index.js';
export { gqaFigures } from './gqa-verdict.js';
export { COPY_LIST, evenInduction, llamaParameters, explainCopying } from './mha-gqa-story.js';
export { MhaSurprisal, measureSurprisal, surprisalBits, findRepeat, parseAblateStrict } from './mha-surprisal.js';
