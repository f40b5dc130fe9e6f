/**
 * mha-wasm/anywidget: an anywidget (https://anywidget.dev) front-end module that mounts
 * `<mha-widget>` or the trained-heads explorer `<mha-trained-heads>` in a Jupyter / Colab /
 * VS Code notebook output.
 *
 * The bundled copy, `web/lib/dist/anywidget.js` (lit and the wasm engine included, the .wasm embedded
 * as in mha-wasm/single), is what a notebook should load: anywidget imports `_esm` from a blob:
 * URL, where neither bare imports nor a .wasm next to the module can be resolved.
 *
 * Python side (model traits, all optional; snake_case names of the element's attributes):
 *   view: 'widget' (default) | 'trained-heads'
 *   for the widget: seq_len: int, d_model: int, heads: int (synced both ways), seed: int,
 *     head_options: str, scheme: 'viridis' | 'cividis', causal: bool
 *   for the trained-heads explorer: model_bytes: bytes (a model file, docs/trained-models.md;
 *     a blob: URL is made of it) or model_url: str, text: str and ablate: str (both synced both
 *     ways; ablate as 1-based "layer:head" pairs), scheme
 * @module mha-wasm/anywidget
 */
import { setEngine } from './components/index.js';
import './components/trained/mha-trained-heads.js';
import { createMHA } from './src/single.js';

/** model trait → element attribute, per view. */
const VIEWS = {
  widget: {
    tag: 'mha-widget',
    traits: { seq_len: 'seq-len', d_model: 'd-model', heads: 'heads', seed: 'seed', head_options: 'head-options', scheme: 'scheme', causal: 'causal' },
    // what the user changes in the element, written back to the model: trait ← event detail
    back: { heads: (d) => (Number.isInteger(d?.heads) ? d.heads : undefined) },
  },
  'trained-heads': {
    tag: 'mha-trained-heads',
    traits: { model_url: 'model', text: 'text', ablate: 'ablate', scheme: 'scheme' },
    back: { text: (d, el) => el.text, ablate: (d, el) => el.ablate ?? '' },
  },
};

let engine = null;

/**
 * Mounts the element of the model's `view` in `el`, configured from the model's traits and kept in
 * sync with them; what the user changes (h in the widget; the text and the switched-off heads in
 * the explorer) is written back to the model.
 * @param {{model: {get(name: string): any, set(name: string, value: any): void,
 *   on(event: string, cb: () => void): void, off(event?: string, cb?: () => void): void,
 *   save_changes(): void}, el: HTMLElement}} ctx the anywidget render context
 * @returns {() => void} cleanup: removes the element, the model listeners and a model blob: URL
 */
export function render({ model, el }) {
  if (!engine) {
    engine = createMHA();
    setEngine(engine);
  }
  const view = VIEWS[model.get('view') ?? 'widget'] ?? VIEWS.widget;
  const widget = document.createElement(view.tag);
  let blobURL = null;
  const apply = (trait) => {
    const attr = view.traits[trait];
    const v = model.get(trait);
    if (v === undefined || v === null || v === false) widget.removeAttribute(attr);
    else if (widget.getAttribute(attr) !== (v === true ? '' : String(v))) widget.setAttribute(attr, v === true ? '' : String(v));
  };
  const applyBytes = () => {
    const b = model.get('model_bytes');
    if (!b) return;
    if (blobURL) URL.revokeObjectURL(blobURL);
    const bytes = b instanceof DataView ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b.buffer ?? b);
    blobURL = URL.createObjectURL(new Blob([bytes]));
    widget.setAttribute('model', blobURL);
  };
  const listeners = [];
  const listen = (trait, cb) => {
    model.on(`change:${trait}`, cb);
    listeners.push([`change:${trait}`, cb]);
  };
  for (const trait of Object.keys(view.traits)) {
    apply(trait);
    listen(trait, () => apply(trait));
  }
  if (view.tag === 'mha-trained-heads') {
    applyBytes();
    listen('model_bytes', applyBytes);
  }
  const onChange = (e) => {
    if (e.target !== widget) return;
    let dirty = false;
    for (const [trait, read] of Object.entries(view.back)) {
      const v = read(e.detail, widget);
      if (v !== undefined && model.get(trait) !== v) {
        model.set(trait, v);
        dirty = true;
      }
    }
    if (dirty) model.save_changes();
  };
  widget.addEventListener('change', onChange);
  el.append(widget);
  return () => {
    for (const [ev, cb] of listeners) model.off(ev, cb);
    widget.removeEventListener('change', onChange);
    widget.remove();
    if (blobURL) URL.revokeObjectURL(blobURL);
  };
}

export default { render };
