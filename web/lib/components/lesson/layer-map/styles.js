// The styles of <mha-layer-map>: the block's rails and sub-layer frames, the tensor buttons, glyphs,
// the detail panel and the wide layout (panel beside the map).
import { css } from 'lit';

/** The element's own CSS (after baseStyles). */
export const layerMapStyles = css`
  :host { display: block; max-width: 100%; min-width: 0; container-type: inline-size; --_mono: var(--mha-mono, ui-monospace, SFMono-Regular, Menlo, monospace); }
  figure { margin: 0; }
  figcaption { font-size: 0.92em; margin-bottom: 0.6rem; }
  .legend { font-size: 0.82em; color: var(--_muted); margin: 0.3rem 0 0.8rem; display: flex; flex-wrap: wrap; gap: 0.2rem 1rem; }
  .legend svg { vertical-align: middle; }
  .legend .dash { border-bottom: 1.5px dashed currentColor; }
  .block { display: grid; grid-template-columns: 1.9rem minmax(0, 1fr); }
  .rail { position: relative; }
  .rail::before { content: ''; position: absolute; left: calc(50% - 1.5px); width: 3px; top: 0; bottom: 0; background: var(--_muted); }
  .rail.start::before { top: 50%; }
  .rail.end::before { bottom: 50%; }
  .rail .plus {
    position: absolute; left: 50%; top: 50%; transform: translate(-50%, -50%); width: 1.35rem; height: 1.35rem;
    border-radius: 50%; background: var(--_bg); border: 2px solid var(--_fg); display: grid; place-items: center;
    font-weight: 700; line-height: 1; font-size: 0.95rem;
  }
  .sub { border: 1.5px dashed var(--_border); border-radius: calc(var(--_radius) * 1.5); padding: 0.4rem 0.5rem 0.6rem; margin: 0.4rem 0; }
  .sub > h3 { margin: 0 0 0.2rem; font-size: 0.85em; font-weight: 600; color: var(--_muted); }
  .row { display: flex; flex-wrap: wrap; gap: 0.4rem 0.6rem; align-items: flex-end; justify-content: center; }
  .op { text-align: center; color: var(--_muted); font-size: 0.8em; margin: 0.15rem 0; line-height: 1.3; }
  .op .arrow { display: block; font-size: 1.1em; color: var(--_fg); }
  button.t {
    display: inline-flex; flex-direction: column; align-items: center; gap: 0.2rem; padding: 0.3rem 0.4rem;
    background: var(--_bg); min-width: 4.2rem; max-width: 100%;
  }
  button.t:hover { border-color: var(--_accent); }
  button.t[aria-pressed='true'] { background: var(--_surface); color: var(--_fg); border: 2px solid var(--_accent); box-shadow: 0 0 0 1px var(--_accent); }
  button.t.maps { flex-direction: column; }
  .name { font-size: 0.85em; font-weight: 600; }
  .shape { font-family: var(--_mono); font-size: 0.78em; white-space: nowrap; }
  .shape[data-derived] { border-bottom: 1.5px dashed currentColor; }
  .maps-grid { display: flex; flex-wrap: wrap; gap: 4px; justify-content: center; max-width: 100%; }
  .maps-grid .m { display: flex; flex-direction: column; align-items: center; font-size: 0.68em; color: var(--_muted); }
  .maps-grid .more { align-self: center; font-size: 0.8em; color: var(--_muted); padding: 0 0.3em; }
  /* head numbers as generated content: the button's accessible name (which says h) starts with its visible text */
  .maps-grid [data-n]::after { content: attr(data-n); }
  svg.glyph { display: block; max-width: 100%; height: auto; overflow: visible; }
  svg .plain { fill: var(--_surface); }
  svg .wide { fill: var(--_surface); }
  svg .faint { stroke: var(--_fg); stroke-opacity: 0.18; stroke-width: 0.6; }
  svg .hatch { stroke: var(--_fg); stroke-opacity: 0.5; stroke-width: 0.8; }
  svg .mask { fill: var(--mha-mask, #8c959f); fill-opacity: 0.92; }
  .detail {
    background: var(--_surface); border: 1px solid var(--_border); border-left: 4px solid var(--_accent);
    border-radius: var(--_radius); padding: 0.5rem 0.8rem; margin: 0.5rem 0; font-size: 0.9em; text-align: left;
  }
  .detail h4 { margin: 0 0 0.3rem; font-size: 1em; }
  .detail dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.15rem 0.7rem; margin: 0.2rem 0 0.4rem; }
  .detail dt { color: var(--_muted); }
  .detail dd { margin: 0; overflow-wrap: anywhere; }
  .detail .mono { font-family: var(--_mono); font-size: 0.95em; }
  .detail p { margin: 0.3rem 0; }
  pre {
    font-family: var(--_mono); font-size: 0.85em; background: var(--_bg); border: 1px solid var(--_border);
    border-radius: var(--_radius); padding: 0.4rem 0.6rem; margin: 0.4rem 0 0.2rem; white-space: pre-wrap; overflow-wrap: anywhere;
  }
  .reshape { display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 0.5rem; margin: 0.4rem 0; }
  .reshape figure { display: flex; flex-direction: column; align-items: center; gap: 0.2rem; }
  .reshape figcaption { font-size: 0.78em; margin: 0; text-align: center; }
  .reshape .to { font-size: 0.8em; color: var(--_muted); text-align: center; }
  .hint { color: var(--_muted); font-size: 0.85em; margin: 0.4rem 0; }
  details.how > summary { cursor: pointer; color: var(--_muted); margin: 0.3rem 0; }
  .loading { color: var(--_muted); font-size: 0.9em; }
  @media (prefers-reduced-motion: no-preference) {
    button.t { transition: border-color 120ms ease, background-color 120ms ease; }
  }
  .layout.wide { display: grid; grid-template-columns: minmax(0, 1fr) minmax(15rem, 17.5rem); gap: 0.8rem; align-items: start; }
  .layout.wide .side { position: sticky; top: 0.5rem; }
  .layout.wide .side .detail { margin-top: 0; }
  /* every sub-layer's stages flow left to right and wrap, a → and the step's label between them, so that
     the block stays short; the selected tensor's detail opens on a line of its own under its stage, or
     (wide) in the side panel */
  .block > div:not(.rail), .sub { display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 0.6rem; }
  .sub > h3 { flex-basis: 100%; margin: 0; }
  .sub { margin: 0.25rem 0; padding: 0.3rem 0.4rem 0.4rem; }
  .block .detail { flex-basis: 100%; box-sizing: border-box; min-width: 0; }
  .name { font-size: 0.8em; }
  .shape { font-size: 0.74em; }
  .step { display: flex; align-items: center; gap: 0.3rem; max-width: 100%; min-width: 0; }
  .row { flex-wrap: nowrap; gap: 0.3rem; min-width: 0; }
  .op { width: max-content; max-width: 6.6rem; margin: 0; font-size: 0.72em; line-height: 1.15; }
  .op .arrow { font-size: 1.3em; }
  /* the residual stream's tensors (X, X + MHA, Y): glyph beside name and shape, one short line */
  .io button.t { display: grid; grid-template-columns: auto auto; column-gap: 0.4rem; align-items: center; }
  .io button.t > svg, .io button.t > span:first-child { grid-row: span 2; }
  .io .op { display: flex; align-items: center; gap: 0.3rem; max-width: none; }
  button.t { padding: 0.2rem 0.3rem; min-width: 3.6rem; gap: 0.1rem; }
  /* a phone: a narrower rail, step labels and frames, so that a stage's three tensors (Q, K, V) share a row */
  @container (max-width: 26rem) {
    .block { grid-template-columns: 1.45rem minmax(0, 1fr); }
    .sub { padding: 0.3rem 0.25rem 0.35rem; }
    .block > div:not(.rail), .sub { column-gap: 0.35rem; }
    .step { gap: 0.2rem; }
    .op { max-width: 4.7rem; }
    .row { flex-wrap: wrap; gap: 0.25rem; }
    button.t { min-width: 3.3rem; padding: 0.2rem 0.25rem; }
  }
`;
