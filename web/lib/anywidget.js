/**
 * mha-wasm/anywidget: an anywidget (https://anywidget.dev) front-end module that mounts
 * `<mha-widget>` in a Jupyter / Colab / VS Code notebook output.
 *
 * The bundled copy, `web/lib/dist/anywidget.js` (lit and the wasm engine included, the .wasm embedded
 * as in mha-wasm/single), is what a notebook should load: anywidget imports `_esm` from a blob:
 * URL, where neither bare imports nor a .wasm next to the module can be resolved.
 *
 * Python side (model traits, all optional; snake_case names of the element's attributes):
 *   seq_len: int, d_model: int, heads: int (synced both ways), seed: int, head_options: str,
 *   scheme: 'viridis' | 'cividis', causal: bool
 * @module mha-wasm/anywidget
 */
import { setEngine } from './components/index.js';
import { createMHA } from './src/single.js';

/** model trait → element attribute. */
const TRAITS = {
  seq_len: 'seq-len', d_model: 'd-model', heads: 'heads', seed: 'seed', head_options: 'head-options',
  scheme: 'scheme', causal: 'causal',
};

let engine = null;

/**
 * Mounts an `<mha-widget>` in `el`, configured from the model's traits and kept in sync with
 * them; the user's choice of h is written back to the model's `heads`.
 * @param {{model: {get(name: string): any, set(name: string, value: any): void,
 *   on(event: string, cb: () => void): void, off(event?: string, cb?: () => void): void,
 *   save_changes(): void}, el: HTMLElement}} ctx the anywidget render context
 * @returns {() => void} cleanup: removes the element and the model listeners
 */
export function render({ model, el }) {
  if (!engine) {
    engine = createMHA();
    setEngine(engine);
  }
  const widget = document.createElement('mha-widget');
  const apply = (trait) => {
    const attr = TRAITS[trait];
    const v = model.get(trait);
    if (v === undefined || v === null || v === false) widget.removeAttribute(attr);
    else widget.setAttribute(attr, v === true ? '' : String(v));
  };
  const listeners = [];
  for (const trait of Object.keys(TRAITS)) {
    apply(trait);
    const cb = () => apply(trait);
    model.on(`change:${trait}`, cb);
    listeners.push([`change:${trait}`, cb]);
  }
  const onChange = (e) => {
    const h = e.detail?.heads;
    if (e.target === widget && Number.isInteger(h) && model.get('heads') !== h) {
      model.set('heads', h);
      model.save_changes();
    }
  };
  widget.addEventListener('change', onChange);
  el.append(widget);
  return () => {
    for (const [ev, cb] of listeners) model.off(ev, cb);
    widget.removeEventListener('change', onChange);
    widget.remove();
  };
}

export default { render };
