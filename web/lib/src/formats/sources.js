/**
 * Where a model's files come from: every source `loadModel` takes, opened as one thing, a folder
 * `{name, main, files, read(file), size(file), done(file), absent(file)}` that the readers (hf.js,
 * llama2c.js, charlm.js) read files from by name, whole or by ranges:
 * - a folder: a URL ending in "/" (fetched; a `file:` URL read from disk in Node), a directory
 *   path in Node, a `FileSystemDirectoryHandle`, a `FileList` or array of `File`s (the folder
 *   picker, `<input type=file webkitdirectory>`, or files dropped on a page);
 * - one file: bytes, a URL not ending in "/", a file path in Node, one `File` (or a list of Files
 *   without config.json, holding one model file and perhaps a llama2.c tokenizer): a folder whose
 *   `main` names the model file.
 * Every read (file-bytes.js) checks the file's size first (maxBytes) and counts its bytes for the
 * `progress` callback; each error is an MHAError naming the file. Pure I/O: nothing here reads a format, so a
 * worker can open the same sources (a File or FileList can be posted to one).
 * @module sources
 */
import { MHAError } from '../engine/errors.js';
import { invalid, isNode, nodeImport, tooBig, NO_PROGRESS, progressCounter, blobBytes, fileBytes, fetchBytes, fetchRange } from './file-bytes.js';

export { progressCounter, fileBytes, fetchBytes };

/**
 * A model's files. `read(file, {maxBytes, optional})` gives a file's bytes (null when `optional`
 * and the file is absent); `read(file, {offset, length, optional})` gives the bytes [offset,
 * offset + length) of it (fewer where the file ends first): a positional read of a file on disk, a
 * slice of a File, an http Range request (a server that answers with the whole file gives it
 * once, and later ranges are cut from it); `size(file)` its size in bytes, null when the source
 * cannot tell (a server that hides Content-Range from the page: read it whole then); `done(file)`
 * says that a reader that read a file by ranges needs nothing more of it (its progress counts the
 * bytes it skipped as read and ends); `absent(file)` says why an optional read found nothing
 * ("HTTP 404 at …", "not among the chosen files …"); `files` lists the names when the source
 * knows them (File lists, directories in Node), else null (a URL: optional files are found by
 * asking); `main` names the model file when the source is one file, else null; that file is read
 * once, however often `read(main)` is called (detection looks at its bytes, then its reader reads it).
 * @typedef {{name: string, main: string|null, files: string[]|null,
 *   read: (file: string, opts?: {maxBytes?: number, optional?: boolean, offset?: number, length?: number}) => Promise<Uint8Array|null>,
 *   size: (file: string) => Promise<number|null>, done: (file: string) => void,
 *   absent: (file: string) => string}} ModelFolder
 */

/** A folder over a base URL (fetched, files by Range requests where the server honours them; `file:` URLs read from disk in Node). */
function urlFolder(base, progress) {
  if (base.protocol === 'file:' && isNode) return dirFolder(base, progress, null);
  const state = { sizes: new Map(), wholes: new Map() };
  return {
    name: base.href, main: null, files: null,
    read(file, { maxBytes = Infinity, optional = false, offset, length } = {}) {
      if (offset !== undefined) return fetchRange(new URL(file, base), file, offset, length, { optional, progress, state });
      const whole = state.wholes.get(file);
      return whole ? Promise.resolve(whole) : fetchBytes(new URL(file, base), file, { maxBytes, optional, progress });
    },
    size: async (file) => state.sizes.get(file) ?? null,
    done(file) {
      state.wholes.delete(file);
      progress.rest(file);
    },
    absent: (file) => `HTTP 404 at ${new URL(file, base).href}`,
  };
}

/** A folder over a directory of the file system (Node): a path or a file: URL; `files` its entries. */
function dirFolder(dir, progress, files) {
  const at = (file) => (dir instanceof URL ? new URL(file, dir) : `${String(dir).replace(/[\\/]+$/, '')}/${file}`);
  return {
    name: String(dir), main: null, files,
    read: (file, { maxBytes = Infinity, optional = false, offset, length } = {}) => fileBytes(at(file), file, { maxBytes, optional, progress, offset, length }),
    async size(file) {
      const fs = await nodeImport('node:fs/promises');
      try {
        return (await fs.stat(at(file))).size;
      } catch (e) {
        throw invalid(`${file}: cannot read ${String(at(file))}: ${e.code || e.message}`);
      }
    },
    done: (file) => progress.rest(file),
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
    async read(file, { maxBytes = Infinity, optional = false, offset, length } = {}) {
      const f = byName.get(file);
      if (!f) { if (optional) return null; throw invalid(`${file}: not among the chosen files (${listed()})`); }
      if (offset === undefined && f.size > maxBytes) throw tooBig(file, f.size, maxBytes);
      return blobBytes(f, file, progress, { offset, length });
    },
    size: async (file) => byName.get(file)?.size ?? null,
    done: (file) => progress.rest(file),
    absent: (file) => `not among the chosen files (${listed()})`,
  };
}

/** A folder over a FileSystemDirectoryHandle (File System Access API). */
function handleFolder(dir, progress) {
  const opened = new Map();   // name → the File, for the ranges of a file read by ranges
  const open = async (file, optional) => {
    if (opened.has(file)) return opened.get(file);
    let fh;
    try {
      fh = await dir.getFileHandle(file);
    } catch (e) {
      if (optional && e && e.name === 'NotFoundError') return null;
      throw invalid(`${file}: cannot open it in the folder "${dir.name}": ${e && e.message}`);
    }
    return fh.getFile();
  };
  return {
    name: dir.name, main: null, files: null,
    async read(file, { maxBytes = Infinity, optional = false, offset, length } = {}) {
      const f = await open(file, optional);
      if (f === null) return null;
      if (offset !== undefined) opened.set(file, f);
      else if (f.size > maxBytes) throw tooBig(file, f.size, maxBytes);
      return blobBytes(f, file, progress, { offset, length });
    },
    size: async (file) => (await open(file, false)).size,
    done(file) {
      opened.delete(file);
      progress.rest(file);
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
    size: async () => null,   // read it whole
    done() {},
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
    // the path is named once: its reason alone (a path may hold colons: C:\\…, C:/…)
    const prefix = `loadModel: ${name}: cannot read ${source}: `;
    return oneFileFolder(source, name, () => fileBytes(source, name, { progress }).catch((e) => {
      const why = String(e.message);
      throw invalid(`cannot read ${source}: ${why.startsWith(prefix) ? why.slice(prefix.length) : why.replace(/^loadModel: /, '')}`);
    }));
  }
  const name = decodeURIComponent(href.split(/[?#]/)[0].split('/').pop() || href);
  if (href.startsWith('file:')) return oneFileFolder(href, name, () => fileBytes(new URL(href), name, { progress }));
  return oneFileFolder(href, name, () => fetchBytes(href, name, { progress }).catch((e) => {
    throw e instanceof MHAError ? new MHAError(e.code, e.message.replace(`loadModel: ${name}: `, 'loadModel: ')) : e;
  }));
}

/**
 * A folder whose model file (`main`) is read once: later reads of it give the same bytes (a ranged
 * read of it, a part of them).
 */
function mainReadOnce(folder) {
  if (folder.main === null) return folder;
  const { read, main } = folder;
  let bytes = null;
  const whole = () => (bytes ??= read(main));
  return {
    ...folder,
    read(file, opts = {}) {
      if (file !== main) return read(file, opts);
      return opts.offset === undefined ? whole() : whole().then((b) => b.subarray(opts.offset, opts.offset + opts.length));
    },
    size: async (file) => (file === main ? (await whole()).length : folder.size(file)),
  };
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
