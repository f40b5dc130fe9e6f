// Entry of the lesson elements (web/lib/dist/mha-lesson-elements.js): the interactive views of the
// lesson's sections 1 and 4–8 as custom elements, their data, and the shared-engine helpers, so a
// course page needs one module script only. Importing this module defines <mha-layer-map>,
// <mha-stepper>, <mha-wo-mix>, <mha-causal-mask>, <mha-cross-attention>, <mha-model-table>,
// <mha-kv-calculator>, <mha-cost-ledger> and <mha-flash-attention> (and the <mha-passport>, <mha-heads>, <mha-heatmap>
// they use).
export { MhaStepper, X_LIMIT } from './lesson/mha-stepper.js';
export { MhaWoMix } from './lesson/mha-wo-mix.js';
export { MhaModelTable } from './lesson/mha-model-table.js';
export { MhaKvCalculator, formatBytes } from './lesson/mha-kv-calculator.js';
export { PEOPLE, FEATURES, X0, HEADS, WO, CONCAT_COLS, restaurantLayerOptions, woOnly } from './logic/restaurant.js';
export { MODELS, DECODERS } from './logic/models-data.js';
export { getEngine, setEngine, toMatrix } from './base/shared.js';
export { MhaCostLedger } from './lesson/mha-cost-ledger.js';
export { costLedger, modelParams, nonAttentionParams, memorySentence, flopsSentence } from './logic/cost-ledger.js';
export { MhaFlashAttention } from './lesson/mha-flash-attention.js';
export { onlineSoftmax, scoreMemory } from './logic/flash-attention.js';
export { MhaCausalMask, causalMaskInputs, causalSentences, CAUSAL_DEFAULT_TEXT } from './lesson/mha-causal-mask.js';
export { MhaCrossAttention, crossAttentionInputs, crossSentences, meaningsOf, LEXICON, CROSS_DEFAULT_SOURCE, CROSS_DEFAULT_TARGET } from './lesson/mha-cross-attention.js';
export { MhaLayerMap, LAYER_MAP_TENSORS, layerMapConfig, layerMapTensors } from './lesson/mha-layer-map.js';
