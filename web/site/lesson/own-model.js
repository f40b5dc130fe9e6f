// Section 12: the reader's own model in <mha-model-view>. The form only hands the element a model:
// a URL typed in (a model file, or a Hugging Face folder ending in "/"), files or a folder from disk
// (the element also takes them dropped on it), or the shipped stories260K again. Loading, running
// and scoring are the element's own.

/** The shipped example, relative to the page. */
const EXAMPLE = 'models/stories260K.safetensors';

export function composeOwnModel() {
  const view = document.querySelector('#own-view');
  const form = document.querySelector('#own-form');
  if (!view || !form) return;
  const url = form.querySelector('#own-url');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const v = url.value.trim();
    if (v) view.setAttribute('model', v);
  });
  for (const input of form.querySelectorAll('input[type=file]')) {
    input.addEventListener('change', () => { if (input.files.length) view.model = input.files; });
  }
  form.querySelector('#own-example').addEventListener('click', () => {
    url.value = '';
    view.setAttribute('model', EXAMPLE);
  });
}
