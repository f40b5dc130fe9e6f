// Entry of the component bundle (web/lib/dist/mha-components.js): the basic custom elements, their
// helpers, and the JS API re-exported so a page needs one module script only.
export { MhaPassport, shapeText } from './views/mha-passport.js';
export { MhaHeatmap } from './views/mha-heatmap.js';
export { MhaHeads } from './views/mha-heads.js';
export { MhaWidget } from './views/mha-widget.js';
export { MhaEngineInfo } from './views/mha-engine-info.js';
export { getEngine, setEngine, toHeads, toMatrix, fmt } from './base/shared.js';
export { getModelEngine } from './base/worker-engine.js';
export { createWorkerMHA, mainThreadEngine, RemoteModel, RemoteGenerator } from '../src/worker.js';
export * from '../src/index.js';
