// What a trained-model element's `model` (and `tokenizer`) stand for: a URL (the attribute), or
// files from the reader's disk set as the property — one `File`, a `FileList` or array of Files
// (`<input type=file>`, `<input type=file webkitdirectory>`, a folder dropped on the element). Each
// source gets a key (the page's model cache shares one loaded model per key), a name to show, and
// what to give mha.loadModel (formats/sources.js reads every kind). And the drop target: files or a
// folder dropped onto the element become its model.
import { modelURL } from '../models.js';
import { baseName } from '../logic/trained-text.js';

const isFile = (f) => typeof File !== 'undefined' && f instanceof File;
/** Whether a `model` or `tokenizer` value is files from disk (a File, a FileList, an array of Files). */
export const isDiskSource = (v) => isFile(v) || (typeof FileList !== 'undefined' && v instanceof FileList)
  || (Array.isArray(v) && v.length > 0 && v.every(isFile));

const ids = new WeakMap();
let nextId = 0;
/** A key unique to one File or list of Files for the page's lifetime. */
const idOf = (o) => { if (!ids.has(o)) ids.set(o, ++nextId); return ids.get(o); };

/**
 * The name files from disk are shown by: a File's name; a folder's name with a slash ("gpt2/",
 * from the files' `webkitRelativePath`), else the files' names (up to three).
 * @param {File|FileList|File[]} v
 * @returns {string}
 */
export function diskName(v) {
  if (isFile(v)) return v.name;
  if (typeof v.folderName === 'string') return `${v.folderName}/`;
  const files = Array.from(v);
  const dirs = new Set(files.map((f) => (f.webkitRelativePath || '').split('/')[0]).filter(Boolean));
  if (dirs.size === 1 && files.every((f) => (f.webkitRelativePath || '').includes('/'))) return `${[...dirs][0]}/`;
  return files.length <= 3 ? files.map((f) => f.name).join(', ') : `${files.length} files (${files.slice(0, 2).map((f) => f.name).join(', ')}, …)`;
}

/**
 * What an element's `model` and `tokenizer` name.
 * @param {string|File|FileList|File[]|null|undefined} model the property (a URL, or files from disk)
 * @param {string|File|null|undefined} tokenizer a llama2.c tokenizer.bin: URL (relative to the page) or File
 * @param {string|null} dflt the element's default model URL
 * @returns {{key: string, href: string|null, name: string, source: *, tokenizer: *}} key: the cache
 *   key; href: the absolute URL (null for files from disk); source: what loadModel reads (null:
 *   the href, whose bytes models.js fetches once per page); tokenizer: loadModel's `tokenizer`
 *   option, or undefined
 * @throws {MHAError} INVALID_ARGUMENT (from modelURL) when there is no model and no default
 */
export function modelSource(model, tokenizer, dflt) {
  const tok = isDiskSource(tokenizer) ? (isFile(tokenizer) ? tokenizer : Array.from(tokenizer)[0])
    : tokenizer ? new URL(String(tokenizer), document.baseURI).href : undefined;
  const tokKey = tok === undefined ? '' : `#tokenizer=${typeof tok === 'string' ? tok : `file:${idOf(tok)}`}`;
  if (isDiskSource(model)) {
    return { key: `disk:${idOf(model)}${tokKey}`, href: null, name: diskName(model), source: isFile(model) ? model : [...model], tokenizer: tok };
  }
  const href = modelURL(model, dflt);
  // with a tokenizer, loadModel reads the URL itself (the bytes of a URL alone are kept for the page)
  return { key: `${href}${tokKey}`, href, name: baseName(href), source: tok === undefined ? null : href, tokenizer: tok };
}

/** The files of a dropped directory entry (its own, not those of its subfolders: a model folder is flat). */
async function entryFiles(entry) {
  const reader = entry.createReader();
  const out = [];
  for (;;) {
    const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
    if (!batch.length) break;
    for (const e of batch) if (e.isFile) out.push(await new Promise((res, rej) => e.file(res, rej)));
  }
  return out;
}

/**
 * The files of a drop: a dropped folder's files (one level; the array's `folderName` is the
 * folder's name), else the dropped files.
 * @param {DataTransfer} dt
 * @returns {Promise<File[] & {folderName?: string}>}
 */
export async function droppedFiles(dt) {
  const entries = Array.from(dt.items ?? [], (it) => (it.kind === 'file' && it.webkitGetAsEntry ? it.webkitGetAsEntry() : null)).filter(Boolean);
  if (entries.length === 1 && entries[0].isDirectory) return Object.assign(await entryFiles(entries[0]), { folderName: entries[0].name });
  return Array.from(dt.files ?? []);
}

/**
 * Makes `el` a drop target for model files: while files are dragged over it the host has the
 * `data-drop` attribute (the element's styles outline it); a drop of files or of one folder calls
 * `onFiles(files)`.
 * @param {HTMLElement} el
 * @param {(files: File[]) => void} onFiles
 * @returns {() => void} removes the listeners
 */
export function dropTarget(el, onFiles) {
  const hasFiles = (e) => Array.from(e.dataTransfer?.types ?? []).includes('Files');
  const over = (e) => { if (!hasFiles(e)) return; e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; el.toggleAttribute('data-drop', true); };
  const leave = (e) => { if (e.target === el) el.removeAttribute('data-drop'); };
  const drop = async (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    el.removeAttribute('data-drop');
    const files = await droppedFiles(e.dataTransfer);
    if (files.length) onFiles(files);
  };
  el.addEventListener('dragover', over);
  el.addEventListener('dragleave', leave);
  el.addEventListener('drop', drop);
  return () => { el.removeEventListener('dragover', over); el.removeEventListener('dragleave', leave); el.removeEventListener('drop', drop); };
}
