// The embed page's script (embed.html, bundled as dist/mha-embed.js): shows one element in a page
// made to be put in an <iframe> by hosts that strip <script> from pasted HTML (Canvas, Moodle).
// `embed.html?el=mha-widget&heads=4&seq-len=6` loads that element's module only and sets each other
// query parameter as its attribute: a name the element does not take is refused with one message;
// a value is checked by the element itself (the attribute contract: last good state, one message in
// place, one `mha-error`). The page posts its height to the host page whenever it changes, as
// `{type: 'mha-embed', height}` (read by embed-resize.js, the host's optional one-line resizer) and
// as the LTI message `{subject: 'lti.frameResize', height}` that LMS pages listen to for tool frames.

/** The elements an embed page shows, each loaded on its own (frames of one page share the files). */
export const EMBED_ELEMENTS = {
  'mha-causal-mask': () => import('./components/lesson/mha-causal-mask.js'),
  'mha-cost-ledger': () => import('./components/lesson/mha-cost-ledger.js'),
  'mha-cross-attention': () => import('./components/lesson/mha-cross-attention.js'),
  'mha-kv-calculator': () => import('./components/lesson/mha-kv-calculator.js'),
  'mha-layer-map': () => import('./components/lesson/mha-layer-map.js'),
  'mha-model-table': () => import('./components/lesson/mha-model-table.js'),
  'mha-stepper': () => import('./components/lesson/mha-stepper.js'),
  'mha-wo-mix': () => import('./components/lesson/mha-wo-mix.js'),
  'mha-generate': () => import('./components/trained/mha-generate.js'),
  'mha-gqa-story': () => import('./components/trained/mha-gqa-story.js'),
  'mha-gqa-twins': () => import('./components/trained/mha-gqa-twins.js'),
  'mha-induction': () => import('./components/trained/mha-induction.js'),
  'mha-surprisal': () => import('./components/trained/mha-surprisal.js'),
  'mha-trained-heads': () => import('./components/trained/mha-trained-heads.js'),
  'mha-twins': () => import('./components/trained/mha-twins.js'),
  'mha-engine-info': () => import('./components/views/mha-engine-info.js'),
  'mha-heads': () => import('./components/views/mha-heads.js'),
  'mha-heatmap': () => import('./components/views/mha-heatmap.js'),
  'mha-passport': () => import('./components/views/mha-passport.js'),
  'mha-widget': () => import('./components/views/mha-widget.js'),
};

/**
 * Shows the element the query names in `main`, with its attributes.
 * @param {URLSearchParams} params the page's query
 * @param {HTMLElement} main where the element (or the message) goes
 * @returns {Promise<HTMLElement|null>} the element, or null when `el` names none
 */
export async function showElement(params, main) {
  const say = (text) => {
    const p = document.createElement('p');
    p.className = 'embed-error';
    p.setAttribute('role', 'alert');
    p.textContent = text;
    main.append(p);
  };
  const tag = params.get('el');
  if (!Object.hasOwn(EMBED_ELEMENTS, tag ?? '')) {
    say(`el: expected one of ${Object.keys(EMBED_ELEMENTS).join(', ')}, got ${JSON.stringify(tag ?? '')}`);
    return null;
  }
  await EMBED_ELEMENTS[tag]();
  const takes = customElements.get(tag).observedAttributes ?? [];
  const el = document.createElement(tag);
  for (const [name, value] of params) {
    if (name === 'el') continue;
    if (takes.includes(name)) el.setAttribute(name, value);
    else say(`${name}: not an attribute of <${tag}>, which takes ${takes.join(', ')}`);
  }
  main.append(el);
  return el;
}

/** Posts the page's height to the host page now and whenever it changes. */
export function postHeight() {
  if (window.parent === window) return;
  let last = -1;
  new ResizeObserver(() => {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: 'mha-embed', height }, '*');
    window.parent.postMessage(JSON.stringify({ subject: 'lti.frameResize', height }), '*');
  }).observe(document.documentElement);
}

const main = document.querySelector('main[data-embed]');
if (main) {
  postHeight();
  showElement(new URLSearchParams(location.search), main);
}
