// The styles of <mha-heatmap>: both renderings (DOM grid and canvas plot), the readout, legend and
// save buttons, and the "Table of values" disclosure.
import { css } from 'lit';

/** The element's own CSS (after baseStyles). `--_cell` is the side of one cell. */
export const heatmapStyles = css`
  :host { display: inline-block; --_cell: var(--mha-cell-size, 28px); }
  :host([compact]) { --_cell: var(--mha-cell-size, 20px); }
  :host([show-values]) { --_cell: var(--mha-cell-size, 44px); }
  :host([show-values][compact]) { --_cell: var(--mha-cell-size, 34px); }
  figure { margin: 0; display: inline-flex; flex-direction: column; gap: 0.35em; }
  .grid {
    display: grid; gap: 1px; align-items: stretch; justify-items: stretch;
    font-size: 0.75em; line-height: 1;
  }
  .row { display: contents; }
  .corner { font-size: 0.85em; color: var(--_muted); align-self: end; padding: 0 4px 2px 0; white-space: nowrap; }
  .rl {
    color: var(--_fg); text-align: right; padding-right: 4px; white-space: nowrap;
    align-self: center; max-width: 7em; overflow: hidden; text-overflow: ellipsis;
  }
  .cl {
    color: var(--_fg); writing-mode: vertical-rl; transform: rotate(180deg);
    white-space: nowrap; padding-bottom: 3px; align-self: end; justify-self: center;
    max-height: 6em; overflow: hidden; text-overflow: ellipsis;
  }
  .hl .rl { font-weight: 700; text-decoration: underline; }
  /* token labels of 11 px or more, whatever a page sets on ::part(label) for small cells; on cells
     smaller than that, one label per step cells (the element picks the step) */
  .grid .rl, .grid .cl { font-size: max(11px, 1em) !important; }
  .grid .spaced { line-height: 1.1; }
  .cell {
    width: var(--_cell); height: var(--_cell); box-sizing: border-box; display: flex;
    align-items: center; justify-content: center; font-variant-numeric: tabular-nums;
    font-size: 0.9em; border-radius: 2px; outline-offset: 0;
  }
  .cell:focus-visible, .cell.active:focus { outline: 3px solid var(--_focus); outline-offset: -1px; z-index: 1; }
  .hl .cell { box-shadow: inset 0 0 0 2px var(--_fg); }
  .readout {
    min-height: 1.3em; font-size: 0.8em; font-variant-numeric: tabular-nums; color: var(--_fg);
  }
  .legend { display: flex; align-items: center; gap: 0.4em; font-size: 0.72em; color: var(--_muted); }
  .bar { height: 10px; flex: 1 1 auto; min-width: 60px; border-radius: 2px; border: 1px solid var(--_border); }
  .actions { display: flex; justify-content: flex-end; gap: 0.3rem; }
  .actions { margin: 0.3em 0; }
  .actions button { font-size: 0.9em; padding: 0.15em 0.5em; }
  .empty { color: var(--_muted); font-size: 0.85em; }
  /* canvas mode */
  .cgrid {
    display: grid; grid-template-columns: auto max-content; gap: 1px;
    font-size: 0.75em; line-height: 1; justify-content: start;
  }
  .cols { display: grid; grid-template-columns: repeat(var(--_tk), var(--_cell)); gap: 1px; }
  .rows { display: grid; grid-template-rows: repeat(var(--_tq), var(--_cell)); gap: 1px; }
  /* Every label is a fixed-size, contained box (a relayout boundary): typing a character
     changes one label's text without laying out the other 191 again. Sizes follow the longest
     token (--_rlw, --_clh, in ch of the label's own font, capped like the DOM mode's labels). */
  .cols .cl, .rows .rl { contain: strict; box-sizing: border-box; }
  .rows .rl { width: min(7em, var(--_rlw)); height: var(--_cell); line-height: var(--_cell); align-self: auto; }
  .cols .cl { width: var(--_cell); height: min(6em, var(--_clh)); line-height: var(--_cell); align-self: auto; justify-self: auto; }
  .rl.hl { font-weight: 700; text-decoration: underline; }
  /* token labels of 11 px or more, whatever a page sets on ::part(label) for small cells; on cells
     smaller than that, one label per --_span cells (the element picks the span) */
  .cols .cl, .rows .rl { font-size: max(11px, 1em) !important; }
  .rows .rl.spaced { height: calc(var(--_span) * (var(--_cell) + 1px) - 1px); line-height: 1.1; }
  .cols .cl.spaced { width: calc(var(--_span) * (var(--_cell) + 1px) - 1px); line-height: 1.1; }
  @supports (writing-mode: sideways-lr) {
    /* the same bottom-to-top text without a transform per label (cheaper to lay out and paint) */
    .cols .cl { writing-mode: sideways-lr; transform: none; padding: 0 0 3px 0; }
  }
  .plot {
    position: relative; cursor: crosshair;
    width: calc(var(--_tk) * var(--_cell) + (var(--_tk) - 1) * 1px);
    height: calc(var(--_tq) * var(--_cell) + (var(--_tq) - 1) * 1px);
  }
  .plot canvas { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; }
  .plot canvas.lores {
    image-rendering: pixelated;
    -webkit-mask:
      linear-gradient(to right, #000 var(--_cell), transparent 0) 0 0 / calc(var(--_cell) + 1px) 100% repeat-x,
      linear-gradient(to bottom, #000 var(--_cell), transparent 0) 0 0 / 100% calc(var(--_cell) + 1px) repeat-y;
    -webkit-mask-composite: source-in;
    mask:
      linear-gradient(to right, #000 var(--_cell), transparent 0) 0 0 / calc(var(--_cell) + 1px) 100% repeat-x,
      linear-gradient(to bottom, #000 var(--_cell), transparent 0) 0 0 / 100% calc(var(--_cell) + 1px) repeat-y;
    mask-composite: intersect;
  }
  .plot canvas.lores.solid { -webkit-mask: none; mask: none; }
  .plot canvas.overlay { left: -4px; top: -4px; width: calc(100% + 8px); height: calc(100% + 8px); }
  .values { font-size: 0.8em; color: var(--_fg); }
  .values summary { cursor: pointer; color: var(--_muted); }
  .table-wrap { max-height: 20em; max-width: 100%; overflow: auto; margin-top: 0.3em; }
  .table-wrap table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 0.9em; }
  .table-wrap caption { text-align: left; color: var(--_muted); padding-bottom: 0.2em; }
  .table-wrap th, .table-wrap td { border: 1px solid var(--_border); padding: 1px 4px; text-align: right; }
  .table-wrap thead th { position: sticky; top: 0; background: var(--_bg); }
  .table-wrap tbody th { position: sticky; left: 0; background: var(--_bg); }
`;
