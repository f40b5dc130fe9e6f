/**
 * mha-wasm/anywidget: an anywidget front-end module that mounts `<mha-widget>` in a notebook
 * output. Notebooks should load the bundled copy `mha-wasm/dist/anywidget.js`.
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
 * Mounts an `<mha-widget>` in `el`, configured from the model traits `seq_len`, `d_model`,
 * `heads`, `seed`, `head_options`, `scheme`, `causal` and kept in sync with them; the user's
 * choice of h is written back to `heads`.
 * @returns cleanup: removes the element and the model listeners
 */
export function render(ctx: { model: AnyModel; el: HTMLElement }): () => void;

declare const widget: { render: typeof render };
export default widget;
