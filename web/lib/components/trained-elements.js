// Entry of the trained-model elements' bundle (web/lib/dist/mha-trained.js): the trained-heads
// explorer, the model view (every head as a thumbnail), the surprisal strip, the induction probe, the composition experiment, the OV circuits, KV-cache generation, the phase change replayed from training checkpoints, the h = 1 / h = 4 twins,
// the grouped-query story and twins, the model cache they share, and everything mha-components.js exports (the basic
// elements and the JS API).
export { MhaTrainedHeads, explainHeads, modelChoices } from './trained/mha-trained-heads.js';
export { MhaModelView } from './trained/mha-model-view.js';
export { MhaInduction, copyBits } from './trained/mha-induction.js';
export { MhaComposition } from './trained/mha-composition.js';
export { MhaOvCircuit, rowScaled } from './trained/mha-ov-circuit.js';
export { compositionExperiment, compositionHeads, supportedPrediction } from './logic/composition.js';
export { MhaGenerate } from './trained/mha-generate.js';
export { MhaTwins, heldoutLoss, twinsVerdict } from './trained/mha-twins.js';
export { MhaGqaTwins, gqaVerdict, kvName } from './trained/mha-gqa-twins.js';
export { MhaGqaStory, describeHeads, copyBitsPerToken, storySentence, MAX_STORY_TOKENS } from './trained/mha-gqa-story.js';
export { DEFAULT_MODEL_URL, DEFAULT_STORIES_URL, DEFAULT_PHASE_URL, MODEL_INDEX_URL, acquireModel, releaseModel, loadedModelCount } from './models.js';
export * from './index.js';
export { gqaFigures } from './logic/gqa-verdict.js';
export { COPY_LIST, evenInduction, llamaParameters, explainCopying } from './trained/mha-gqa-story.js';
export { MhaPhaseChange } from './trained/mha-phase-change.js';
export { readCheckpoints, phaseChange, phaseSentence } from './logic/phase-change.js';
export { MhaSurprisal, measureSurprisal, surprisalBits, findRepeat, parseAblateStrict } from './trained/mha-surprisal.js';
