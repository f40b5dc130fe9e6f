/**
 * mha-wasm/anywidget: an anywidget front-end module that mounts `<mha-widget>` or the trained-heads
 * explorer `<mha-trained-heads>` in a notebook output. Notebooks should load the bundled copy `mha-wasm/dist/anywidget.js`.
 * @packageDocumentation
 */

/** The part of anywidget's model that render() uses. */
export interface AnyModel {
  get(name: string): any;
  set(name: string, value: any): void;
  on(event: string, callback: () => void): void;
  off(event?: string | null, callback?: (() => void) | null): void;
  save_changes(): void;
}

/**
 * Mounts the element of the model trait `view` in `el` and keeps it in sync with the traits.
 * `view: 'widget'` (default): `<mha-widget>` from `seq_len`, `d_model`, `heads`, `seed`,
 * `head_options`, `scheme`, `causal`; the user's choice of h is written back to `heads`.
 * `view: 'trained-heads'`: `<mha-trained-heads>` from `model_bytes` (bytes of a model file) or
 * `model_url`, `text`, `ablate` (1-based "layer:head" pairs), `scheme`; the text typed and the
 * heads switched off are written back to `text` and `ablate`.
 * @returns cleanup: removes the element, the model listeners and the model's blob: URL
 */
export function render(ctx: { model: AnyModel; el: HTMLElement }): () => void;

declare const widget: { render: typeof render };
export default widget;
