// What <mha-heatmap> hands its renderers (dom-grid.js, canvas-grid.js, legend.js): one object made
// by the element for each render (`_view(m)`), so that a renderer reads what it draws from its
// argument and calls the element back through `on`, never through the element's fields.

/**
 * @typedef {object} HeatmapView
 * @property {number[][]} m the `[Tq][Tk]` weights (not empty)
 * @property {string[]} q the query labels (Tq)
 * @property {string[]} k the key labels (Tk)
 * @property {number} lo low end of the colour range
 * @property {number} hi high end of the colour range
 * @property {string} label the map's name
 * @property {'viridis'|'cividis'} scheme the colour scale
 * @property {number} digits decimals of a value in the readout and the table
 * @property {[number, number]} active the active cell `[row, col]`
 * @property {string} activeText the active cell's readout ("query → key: value")
 * @property {number} step every step-th token is labelled (labels keep a legible size on small cells)
 * @property {number} highlightRow the highlighted query row (-1: none)
 * @property {boolean} showValues whether each cell prints its value
 * @property {boolean} compact the small-multiples size
 * @property {boolean} noSave whether the save buttons are left out
 * @property {boolean} tableOpen whether the canvas plot's table of values is open (rendered only then)
 * @property {string} readout the readout line
 * @property {unknown} messages the attribute messages (an AttrGuard's view)
 * @property {{key: (e: KeyboardEvent) => void, rowHover: (r: number) => void, show: (r: number, c: number, focus: boolean) => void,
 *   pick: (r: number, c: number) => void, toggle: (e: Event) => void, save: (format: 'png'|'svg') => void,
 *   plotFocus: () => void, plotBlur: () => void, plotMove: (e: PointerEvent) => void, plotLeave: () => void,
 *   plotClick: (e: MouseEvent) => void}} on the element's handlers
 */
export {};
