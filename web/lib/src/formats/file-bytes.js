/**
 * The bytes of one file of a model, from wherever it is (sources.js opens the sources as folders
 * and reads their files through these): a file of the file system in Node (positional reads), a
 * Blob or File (slices), an http(s) URL (fetch; Range requests for parts of a file). Each read
 * checks the size first (maxBytes), counts its bytes for the `progress` callback of loadModel
 * (progressCounter) and names the file in its errors.
 * @module file-bytes
 */
import { MHAError } from '../engine/errors.js';

/** URLs that answered an optional read with 404: not asked again while the page lives. */
const ABSENT = new Set();
/** An INVALID_ARGUMENT MHAError of loadModel. */
export const invalid = (msg) => new MHAError('INVALID_ARGUMENT', `loadModel: ${msg}`);
/** Whether this runs in Node (not a page, nor a worker of one). */
export const isNode = typeof process !== 'undefined' && !!(process.versions && process.versions.node) && typeof window === 'undefined';
/** A Node built-in module, imported so that bundlers leave it alone. */
export const nodeImport = (name) => import(/* @vite-ignore */ /* webpackIgnore: true */ name);

/** The error of a file over maxBytes. */
export function tooBig(file, size, maxBytes) {
  return invalid(`${file}: file size must be at most ${maxBytes} bytes, got ${size}`);
}

/**
 * Progress of a load: `loadModel`'s `progress` callback, called as the bytes of each file arrive.
 * Each event is `{file, loaded, total, fraction}`: `loaded` the bytes read so far of every file of
 * the model (never decreases); `total` the sizes of the files started so far (known before their
 * bytes: a file's size, a `File`'s size, an http Content-Length or Content-Range; it grows when
 * the next file of a folder starts, so `fraction` = loaded / total can step back then), or null
 * while a size is unknown (an http response without Content-Length, or compressed); the last
 * event has loaded === total and fraction 1 (a file read by ranges counts its unread bytes as read
 * when its reader is done with it).
 * @typedef {{file: string, loaded: number, total: number|null, fraction: number|null}} LoadProgress
 */

/** Read granularity of files and File objects, and the step between progress events. */
const CHUNK = 8 * 2 ** 20;

/**
 * A progress counter over the files of one load (the `progress` option of loadModel), or a
 * no-op when `callback` is absent. Files are counted each on its own: `start` (once per file
 * while it is being read; its size, or null when unknown), `add` its bytes as they arrive, `end`
 * (its real length is then what was added: a compressed body may differ from its Content-Length),
 * `rest` (a file read by ranges: the bytes not read count as read, then end); so the ranges of
 * one file may come between other files' reads.
 * @param {((p: LoadProgress) => void)|undefined} callback
 * @returns {{start(file: string, size: number|null): void, add(file: string, n: number): void,
 *   end(file: string): void, rest(file: string): void}}
 */
export function progressCounter(callback) {
  if (callback !== undefined && callback !== null && typeof callback !== 'function') {
    throw invalid(`progress must be a function ({file, loaded, total, fraction}) => void, got ${typeof callback}`);
  }
  const open = new Map();   // file → {size: number|null, read: number} of the files being read
  let loaded = 0, closed = 0;   // bytes read; the lengths of the files read to their end
  const emit = (file) => {
    if (!callback) return;
    let total = closed;
    for (const f of open.values()) total = total === null || f.size === null ? null : total + f.size;
    callback({ file, loaded, total, fraction: total ? Math.min(1, loaded / total) : total === 0 ? 1 : null });
  };
  return {
    start(file, n) {
      if (open.has(file)) return;
      open.set(file, { size: n ?? null, read: 0 });
      emit(file);
    },
    add(file, n) {
      loaded += n;
      const f = open.get(file);
      if (f) f.read += n;
      emit(file);
    },
    end(file) {
      const f = open.get(file);
      if (!f) return;
      closed += f.read;
      open.delete(file);
      emit(file);
    },
    rest(file) {
      const f = open.get(file);
      if (f && f.size !== null && f.size > f.read) this.add(file, f.size - f.read);
      this.end(file);
    },
  };
}

/** A no-op progress counter. */
export const NO_PROGRESS = progressCounter(undefined);

/**
 * The body of an http response as bytes, at most maxBytes, counted by `pc` as it arrives (started
 * and ended as a whole file unless `ranged`: a part of one). With a Content-Length (and no
 * Content-Encoding), one buffer of that size is filled in place.
 */
async function responseBytes(res, file, maxBytes, pc, ranged = false) {
  const enc = res.headers.get('content-encoding');
  const lenHeader = res.headers.get('content-length');
  const len = lenHeader !== null && /^\d+$/.test(lenHeader.trim()) && (!enc || enc === 'identity') ? Number(lenHeader) : null;
  if (len !== null && len > maxBytes) { res.body?.cancel?.(); throw tooBig(file, len, maxBytes); }
  if (!ranged) pc.start(file, len);
  if (!res.body || typeof res.body.getReader !== 'function') {
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.length > maxBytes) throw tooBig(file, bytes.length, maxBytes);
    pc.add(file, bytes.length);
    if (!ranged) pc.end(file);
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
  if (!ranged) pc.end(file);
  if (out) return n === out.length ? out : out.subarray(0, n);
  const bytes = new Uint8Array(n);
  let o = 0;
  for (const p of parts) { bytes.set(p, o); o += p.length; }
  return bytes;
}

/**
 * The bytes of a Blob/File of known size, read in chunks (so that progress can be told): the whole
 * of it, or with `offset` the bytes [offset, offset + length) (fewer at its end), sliced.
 */
export async function blobBytes(f, file, pc, { offset, length } = {}) {
  const ranged = offset !== undefined;
  pc.start(file, f.size);
  const from = ranged ? Math.min(offset, f.size) : 0, to = ranged ? Math.min(f.size, from + length) : f.size;
  if (typeof f.slice !== 'function' || (!ranged && f.size <= CHUNK)) {
    const bytes = new Uint8Array(await f.arrayBuffer()).subarray(from, to);
    pc.add(file, bytes.length);
    if (!ranged) pc.end(file);
    return bytes;
  }
  const bytes = new Uint8Array(to - from);
  for (let o = from; o < to; o += CHUNK) {
    const part = new Uint8Array(await f.slice(o, Math.min(to, o + CHUNK)).arrayBuffer());
    bytes.set(part, o - from);
    pc.add(file, part.length);
  }
  if (!ranged) pc.end(file);
  return bytes;
}

/**
 * Node: the bytes of a file of the file system (a path or a file: URL), read in chunks into one
 * buffer of its size (so that progress can be told), or with `offset` the bytes [offset, offset +
 * length) of it (fewer at its end: positional reads); null when `optional` and absent.
 */
export async function fileBytes(p, file, { maxBytes = Infinity, optional = false, progress = NO_PROGRESS, offset, length } = {}) {
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
    const ranged = offset !== undefined;
    if (!ranged && st.size > maxBytes) throw tooBig(file, st.size, maxBytes);
    progress.start(file, st.size);
    const from = ranged ? Math.min(offset, st.size) : 0;
    const bytes = new Uint8Array(ranged ? Math.min(length, st.size - from) : st.size);
    let o = 0;
    while (o < bytes.length) {
      const { bytesRead } = await fh.read(bytes, o, Math.min(CHUNK, bytes.length - o), from + o);
      if (bytesRead === 0) break;   // the file shrank while being read
      o += bytesRead;
      progress.add(file, bytesRead);
    }
    if (!ranged) progress.end(file);
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

/**
 * The bytes [offset, offset + length) at an http(s) URL by a Range request (fewer at the end of the
 * file), counted by `progress`; the file's size, from Content-Range, goes to `state.sizes`. A
 * server that answers with the whole file (200: it does not honour ranges) is read once: the bytes
 * are kept in `state.wholes` and later ranges cut from them; so is one whose ranged request fails
 * (a cross-origin server whose CORS preflight refuses the Range header). Null when `optional` and
 * absent (404).
 * @throws {MHAError} INVALID_ARGUMENT: as fetchBytes; a 206 answer for another range than asked
 */
export async function fetchRange(url, file, offset, length, { optional = false, progress, state }) {
  const whole = state.wholes.get(file);
  if (whole) return whole.subarray(offset, offset + length);
  const href = String(url);
  if (optional && ABSENT.has(href)) return null;
  let res;
  try {
    res = await fetch(href, { headers: { Range: `bytes=${offset}-${offset + length - 1}` } });
  } catch {
    // a cross-origin server may refuse the Range header (its CORS preflight): the whole file, once
    const bytes = await fetchBytes(href, file, { optional, progress });
    if (bytes === null) return null;
    state.wholes.set(file, bytes);
    state.sizes.set(file, bytes.length);
    return bytes.subarray(offset, offset + length);
  }
  if (res.status === 404 && optional) {
    ABSENT.add(href);
    return null;
  }
  const range = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec((res.headers.get('content-range') ?? '').trim());
  if (range && range[3] !== '*') state.sizes.set(file, Number(range[3]));
  if (res.status === 416) {   // the range starts at or past the end of the file
    res.body?.cancel?.();
    return new Uint8Array(0);
  }
  if (!res.ok) throw invalid(`${file}: fetching ${href} gave HTTP ${res.status}`);
  if (res.status !== 206) {
    const bytes = await responseBytes(res, file, Infinity, progress);
    state.wholes.set(file, bytes);
    state.sizes.set(file, bytes.length);
    return bytes.subarray(offset, offset + length);
  }
  if (range && range[1] !== undefined && Number(range[1]) !== offset) {
    res.body?.cancel?.();
    throw invalid(`${file}: ${href} answered the range of bytes ${offset}–${offset + length - 1} with bytes ${range[1]}–${range[2]}`);
  }
  progress.start(file, state.sizes.get(file) ?? null);
  const bytes = await responseBytes(res, file, Infinity, progress, true);
  return bytes.length > length ? bytes.subarray(0, length) : bytes;
}
