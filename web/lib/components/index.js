// Entry of the component bundle (web/lib/dist/mha-components.js): the basic custom elements, their
// helpers, and the JS API re-exported so a page needs one module script only.
export { MhaPassport, shapeText } from './mha-passport.js';
export { MhaHeatmap } from './mha-heatmap.js';
export { MhaHeads } from './mha-heads.js';
export { MhaWidget } from './mha-widget.js';
export { MhaEngineInfo } from './mha-engine-info.js';
export { getEngine, setEngine, toHeads, toMatrix, fmt } from './shared.js';
export * from '../src/index.js';
