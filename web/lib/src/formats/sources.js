/**
 * Where a model's files come from: every source `loadModel` takes, opened as one thing, a folder
 * `{name, main, files, read(file), absent(file)}` that the readers (hf.js, llama2c.js, charlm.js)
 * read files from by name:
 * - a folder: a URL ending in "/" (fetched; a `file:` URL read from disk in Node), a directory
 *   path in Node, a `FileSystemDirectoryHandle`, a `FileList` or array of `File`s (the folder
 *   picker, `<input type=file webkitdirectory>`, or files dropped on a page);
 * - one file: bytes, a URL not ending in "/", a file path in Node, one `File` (or a list of Files
 *   without config.json, holding one model file and perhaps a llama2.c tokenizer): a folder whose
 *   `main` names the model file.
 * Every read checks the file's size first (maxBytes) and counts its bytes for the `progress`
 * callback; each error is an MHAError naming the file. Pure I/O: nothing here reads a format, so a
 * worker can open the same sources (a File or FileList can be posted to one).
 * @module sources
 */
import { MHAError } from '../engine/errors.js';

/**
 * A model's files. `read(file, {maxBytes, optional})` gives a file's bytes (null when `optional`
 * and the file is absent); `absent(file)` says why an optional read found nothing ("HTTP 404 at
 * …", "not among the chosen files …"); `files` lists the names when the source knows them (File
 * lists, directories in Node), else null (a URL: optional files are found by asking); `main` names
 * the model file when the source is one file, else null; that file is read once, however often
 * `read(main)` is called (detection looks at its bytes, then its reader reads it).
 * @typedef {{name: string, main: string|null, files: string[]|null,
 *   read: (file: string, opts?: {maxBytes?: number, optional?: boolean}) => Promise<Uint8Array|null>,
 *   absent: (file: string) => string}} ModelFolder
 */

/** URLs that answered an optional read with 404: not asked again while the page lives. */
const ABSENT = new Set();
const invalid = (msg) => new MHAError('INVALID_ARGUMENT', `loadModel: ${msg}`);
const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node) && typeof window === 'undefined';
const nodeImport = (name) => import(/* @vite-ignore */ /* webpackIgnore: true */ name);

function tooBig(file, size, maxBytes) {
  return invalid(`${file}: file size must be at most ${maxBytes} bytes, got ${size}`);
}

/**
 * Progress of a load: `loadModel`'s `progress` callback, called as the bytes of each file arrive.
 * Each event is `{file, loaded, total, fraction}`: `loaded` the bytes read so far of every file of
 * the model (never decreases); `total` the sizes of the files read so far plus the one being read
 * (known before its bytes: a file's size, a `File`'s size, an http Content-Length; it grows when
 * the next file of a folder starts, so `fraction` = loaded / total can step back then), or null
 * while a size is unknown (an http response without Content-Length, or compressed); the last
 * event has loaded === total and fraction 1.
 * @typedef {{file: string, loaded: number, total: number|null, fraction: number|null}} LoadProgress
 */

/** Read granularity of files and File objects, and the step between progress events. */
const CHUNK = 8 * 2 ** 20;

/**
 * A progress counter over the files of one load (the `progress` option of loadModel), or a
 * no-op when `callback` is absent.
 * @param {((p: LoadProgress) => void)|undefined} callback
 * @returns {{start(file: string, size: number|null): void, add(file: string, n: number): void, end(file: string): void}}
 */
export function progressCounter(callback) {
  if (callback !== undefined && callback !== null && typeof callback !== 'function') {
    throw invalid(`progress must be a function ({file, loaded, total, fraction}) => void, got ${typeof callback}`);
  }
  let done = 0, loaded = 0, size = 0, known = true;
  const emit = (file) => {
    if (!callback) return;
    const total = known ? done + size : null;
    callback({ file, loaded, total, fraction: total ? Math.min(1, loaded / total) : total === 0 ? 1 : null });
  };
  return {
    start(file, n) { size = n ?? 0; known = known && n !== null && n !== undefined; emit(file); },
    add(file, n) { loaded += n; emit(file); },
    end(file) {   // the file's real length (a compressed body may differ from its Content-Length)
      done = loaded; size = 0;
      if (!known) { known = true; }
      emit(file);
    },
  };
}

/** A no-op progress counter. */
const NO_PROGRESS = progressCounter(undefined);

/**
 * The body of an http response as bytes, at most maxBytes, counted by `pc` as it arrives. With a
 * Content-Length (and no Content-Encoding), one buffer of that size is filled in place.
 */
async function responseBytes(res, file, maxBytes, pc) {
  const enc = res.headers.get('content-encoding');
  const lenHeader = res.headers.get('content-length');
  const len = lenHeader !== null && /^\d+$/.test(lenHeader.trim()) && (!enc || enc === 'identity') ? Number(lenHeader) : null;
  if (len !== null && len > maxBytes) { res.body?.cancel?.(); throw tooBig(file, len, maxBytes); }
  pc.start(file, len);
  if (!res.body || typeof res.body.getReader !== 'function') {
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.length > maxBytes) throw tooBig(file, bytes.length, maxBytes);
    pc.add(file, bytes.length);
    pc.end(file);
    return bytes;
  }
  const reader = res.body.getReader();
  let out = len !== null ? new Uint8Array(len) : null;
  const parts = [];
  let n = 0, since = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (n + value.length > maxBytes) { reader.cancel().catch(() => {}); throw tooBig(file, n + value.length, maxBytes); }
    if (out && n + value.length <= out.length) out.set(value, n);
    else {
      if (out) { parts.push(out.subarray(0, n)); out = null; }   // longer than its Content-Length
      parts.push(value);
    }
    n += value.length;
    since += value.length;
    if (since >= CHUNK) { pc.add(file, since); since = 0; }
  }
  pc.add(file, since);
  pc.end(file);
  if (out) return n === out.length ? out : out.subarray(0, n);
  const bytes = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { bytes.set(p, o); o += p.length; }
  return bytes;
}

/** The bytes of a Blob/File of known size, read in chunks (so that progress can be told). */
async function blobBytes(f, file, pc) {
  pc.start(file, f.size);
  if (f.size <= CHUNK || typeof f.slice !== 'function') {
    const bytes = new Uint8Array(await f.arrayBuffer());
    pc.add(file, bytes.length);
    pc.end(file);
    return bytes;
  }
  const bytes = new Uint8Array(f.size);
  for (let o = 0; o < f.size; o += CHUNK) {
    const part = new Uint8Array(await f.slice(o, Math.min(f.size, o + CHUNK)).arrayBuffer());
    bytes.set(part, o);
    pc.add(file, part.length);
  }
  pc.end(file);
  return bytes;
}

/**
 * Node: the bytes of a file of the file system (a path or a file: URL), read in chunks into one
 * buffer of its size (so that progress can be told); null when `optional` and absent.
 */
export async function fileBytes(p, file, { maxBytes = Infinity, optional = false, progress = NO_PROGRESS } = {}) {
  const fs = await nodeImport('node:fs/promises');
  let fh;
  try {
    fh = await fs.open(p, 'r');
  } catch (e) {
    if (e.code === 'ENOENT' && optional) return null;
    throw invalid(`${file}: cannot read ${String(p)}: ${e.code || e.message}`);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw invalid(`${file}: ${String(p)} is not a file`);
    if (st.size > maxBytes) throw tooBig(file, st.size, maxBytes);
    progress.start(file, st.size);
    const bytes = new Uint8Array(st.size);
    let o = 0;
    while (o < bytes.length) {
      const { bytesRead } = await fh.read(bytes, o, Math.min(CHUNK, bytes.length - o), o);
      if (bytesRead === 0) break;   // the file shrank while being read
      o += bytesRead;
      progress.add(file, bytesRead);
    }
    progress.end(file);
    return o === bytes.length ? bytes : bytes.subarray(0, o);
  } catch (e) {
    if (e instanceof MHAError) throw e;
    throw invalid(`${file}: cannot read ${String(p)}: ${e.code || e.message}`);
  } finally {
    await fh.close();
  }
}

/**
 * The bytes at an http(s) URL (fetch), counted by `progress`. With `optional`, a 404 gives null
 * and the URL is remembered for the page's lifetime, so that a later optional read of it (the same
 * folder loaded again) returns null without a request.
 * @param {URL|string} url
 * @param {string} file the name used in errors
 * @returns {Promise<Uint8Array|null>}
 * @throws {MHAError} INVALID_ARGUMENT: network error, an HTTP status other than 2xx (404 when not
 *   optional), a body over maxBytes; each names the file and the URL
 */
export async function fetchBytes(url, file, { maxBytes = Infinity, optional = false, progress = NO_PROGRESS } = {}) {
  const href = String(url);
  if (optional && ABSENT.has(href)) return null;   // answered 404 before: not asked again (each 404 is a console line in a browser)
  let res;
  try {
    res = await fetch(href);
  } catch (e) {
    throw invalid(`${file}: cannot fetch ${href}: ${e.message}`);
  }
  if (res.status === 404 && optional) {
    ABSENT.add(href);
    return null;
  }
  if (!res.ok) throw invalid(`${file}: fetching ${href} gave HTTP ${res.status}`);
  return responseBytes(res, file, maxBytes, progress);
}


/** A folder over a base URL (fetched; `file:` URLs read from disk in Node). */
function urlFolder(base, progress) {
  if (base.protocol === 'file:' && isNode) return dirFolder(base, progress, null);
  return {
    name: base.href, main: null, files: null,
    read: (file, { maxBytes = Infinity, optional = false } = {}) => fetchBytes(new URL(file, base), file, { maxBytes, optional, progress }),
    absent: (file) => `HTTP 404 at ${new URL(file, base).href}`,
  };
}

/** A folder over a directory of the file system (Node): a path or a file: URL; `files` its entries. */
function dirFolder(dir, progress, files) {
  const at = (file) => (dir instanceof URL ? new URL(file, dir) : `${String(dir).replace(/[\\/]+$/, '')}/${file}`);
  return {
    name: String(dir), main: null, files,
    read: (file, { maxBytes = Infinity, optional = false } = {}) => fileBytes(at(file), file, { maxBytes, optional, progress }),
    absent: (file) => `no file ${String(at(file))}`,
  };
}

/** A folder over File objects (the folder picker, drag and drop), by name; `main` when it is one model file. */
function fileListFolder(files, progress, main = null) {
  const byName = new Map();
  for (const f of files) byName.set(f.name, f);
  const names = [...byName.keys()];
  const listed = () => `${names.slice(0, 12).join(', ')}${names.length > 12 ? ', …' : ''}`;
  return {
    name: main ?? (files.length === 1 ? files[0].name : 'the chosen files'), main, files: names,
    async read(file, { maxBytes = Infinity, optional = false } = {}) {
      const f = byName.get(file);
      if (!f) { if (optional) return null; throw invalid(`${file}: not among the chosen files (${listed()})`); }
      if (f.size > maxBytes) throw tooBig(file, f.size, maxBytes);
      return blobBytes(f, file, progress);
    },
    absent: (file) => `not among the chosen files (${listed()})`,
  };
}

/** A folder over a FileSystemDirectoryHandle (File System Access API). */
function handleFolder(dir, progress) {
  return {
    name: dir.name, main: null, files: null,
    async read(file, { maxBytes = Infinity, optional = false } = {}) {
      let fh;
      try {
        fh = await dir.getFileHandle(file);
      } catch (e) {
        if (optional && e && e.name === 'NotFoundError') return null;
        throw invalid(`${file}: cannot open it in the folder "${dir.name}": ${e && e.message}`);
      }
      const f = await fh.getFile();
      if (f.size > maxBytes) throw tooBig(file, f.size, maxBytes);
      return blobBytes(f, file, progress);
    },
    absent: (file) => `no file ${file} in the folder "${dir.name}"`,
  };
}

/**
 * A folder of one file: `main` is its name, and reading it gives `bytes()` (the model file of a
 * source that names one file); no other file is in it.
 */
function oneFileFolder(name, main, bytes) {
  return {
    name, main, files: [main],
    async read(file, { optional = false } = {}) {
      if (file === main) return bytes();
      if (optional) return null;
      throw invalid(`${file}: not in ${name} (one file)`);
    },
    absent: () => `${name} is one file`,
  };
}

const hasScheme = (s) => /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) && !/^[a-zA-Z]:[\\/]/.test(s);
const isFile = (f) => f && typeof f === 'object' && typeof f.name === 'string' && typeof f.arrayBuffer === 'function' && typeof f.size === 'number';
const isFileList = (s) => (typeof FileList !== 'undefined' && s instanceof FileList) || (Array.isArray(s) && s.length > 0 && s.every(isFile));

/** A llama2.c tokenizer's file name (tokenizer.bin, tok512.bin, tok4096.bin …). */
export const LLAMA2C_TOKENIZER_NAME = /^(tokenizer|tok\d*)\.bin$/i;

/** A file only a Hugging Face model folder has (a .json or .txt, its weights' names). */
const isFolderFile = (n) => /\.(json|txt)$/i.test(n) || /^model(-\d+-of-\d+)?\.safetensors$/.test(n);

/**
 * The model file of a list of files that is not a Hugging Face folder: the one `.safetensors` or
 * `.bin` that is not a llama2.c tokenizer, in a list with no file of such a folder (a `.json` or
 * `.txt` file, a `model.safetensors` or a shard `model-00001-of-00002.safetensors`); null when the
 * list is a folder, or holds no model file or several.
 * @param {string[]} names
 * @returns {string|null}
 */
export function modelFileOf(names) {
  if (names.some(isFolderFile)) return null;
  const models = names.filter((n) => /\.(safetensors|bin)$/i.test(n) && !LLAMA2C_TOKENIZER_NAME.test(n));
  return models.length === 1 ? models[0] : null;
}

/** The bytes of a source that names one file (bytes, a URL, a Node path), read when asked. */
function oneFileSource(source, progress) {
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    const bytes = source instanceof Uint8Array ? source : ArrayBuffer.isView(source)
      ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength) : new Uint8Array(source);
    return oneFileFolder('the bytes given', 'bytes', async () => {
      progress.start('bytes', bytes.length);
      progress.add('bytes', bytes.length);
      progress.end('bytes');
      return bytes;
    });
  }
  if (typeof source !== 'string' && !(source instanceof URL)) {
    throw invalid(`source must be bytes (ArrayBuffer, Uint8Array) or a URL, got ${source === null ? 'null' : typeof source}`);
  }
  const href = String(source);
  if (isNode && typeof source === 'string' && !hasScheme(source)) {
    const name = source.split(/[\\/]/).pop();
    return oneFileFolder(source, name, () => fileBytes(source, name, { progress }).catch((e) => {
      throw invalid(`cannot read ${source}: ${String(e.message).replace(/^loadModel: [^:]*: cannot read [^:]*: /, '')}`);
    }));
  }
  const name = decodeURIComponent(href.split(/[?#]/)[0].split('/').pop() || href);
  if (href.startsWith('file:')) return oneFileFolder(href, name, () => fileBytes(new URL(href), name, { progress }));
  return oneFileFolder(href, name, () => fetchBytes(href, name, { progress }).catch((e) => {
    throw e instanceof MHAError ? new MHAError(e.code, e.message.replace(`loadModel: ${name}: `, 'loadModel: ')) : e;
  }));
}

/** A folder whose model file (`main`) is read once: later reads of it give the same bytes. */
function mainReadOnce(folder) {
  if (folder.main === null) return folder;
  const { read, main } = folder;
  let bytes = null;
  return { ...folder, read: (file, opts) => (file === main ? (bytes ??= read(file, opts)) : read(file, opts)) };
}

/** The folder of a source (see openSource). */
async function openAny(source, progress) {
  if (source && typeof source === 'object' && source.kind === 'directory' && typeof source.getFileHandle === 'function') return handleFolder(source, progress);
  if (isFile(source)) return fileListFolder([source], progress, source.name);
  if (isFileList(source)) {
    const files = Array.from(source);
    const names = files.map((f) => f.name);
    const main = modelFileOf(names);
    if (main) return fileListFolder(files, progress, main);
    if (!names.some(isFolderFile)) {
      throw invalid(`source: the chosen files (${names.slice(0, 12).join(', ')}) must be a Hugging Face model folder (config.json, ` +
        'model.safetensors, the tokenizer) or hold one model file (.safetensors, or a llama2.c .bin with its tokenizer.bin)');
    }
    return fileListFolder(files, progress);
  }
  if (source instanceof URL && source.pathname.endsWith('/')) return urlFolder(source, progress);
  if (typeof source === 'string' && isNode && !hasScheme(source)) {
    const fs = await nodeImport('node:fs/promises');
    const st = await fs.stat(source).catch(() => null);
    if (st && st.isDirectory()) return dirFolder(source, progress, await fs.readdir(source).catch(() => null));
  } else if (typeof source === 'string' && source.split(/[?#]/)[0].endsWith('/')) {
    const base = typeof location !== 'undefined' ? new URL(source, location.href) : new URL(source);
    return urlFolder(base, progress);
  }
  return oneFileSource(source, progress);
}

/**
 * Opens any source `loadModel` takes as a folder (see the module's description).
 * @param {ArrayBuffer|ArrayBufferView|string|URL|File|FileList|File[]|FileSystemDirectoryHandle} source
 * @param {ReturnType<typeof progressCounter>} [progress] counts the bytes of the files read
 * @returns {Promise<ModelFolder>} `main` null for a folder, the model file's name for one file
 * @throws {MHAError} INVALID_ARGUMENT: a source of another type ("source must be bytes … or a
 *   URL"); a list of Files with neither config.json nor exactly one model file
 */
export async function openSource(source, progress = NO_PROGRESS) {
  return mainReadOnce(await openAny(source, progress));
}
