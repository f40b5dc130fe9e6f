/**
 * Wasm memory for the JS side: one growable staging block per owner (layer or cache), reused
 * across calls, with an up-front out-of-memory check.
 * @module memory
 */
import { MHAError } from './errors.js';

/** Largest heap the module can grow to (link flag -sMAXIMUM_MEMORY=2GB). */
export const MAX_HEAP_BYTES = 2 ** 31;
/** Kept free for the stack, static data and allocator overhead. */
const RESERVE_BYTES = 16 * 2 ** 20;

/**
 * Throws OUT_OF_MEMORY when `bytes` more cannot fit in the heap the module can grow to.
 * @param {object} core the Emscripten module
 * @param {number} bytes bytes the request would allocate
 * @param {string} what names the request
 */
export function checkFits(core, bytes, what) {
  // Cheap test first: the heap can always grow by what it has not reached yet.
  if (Number.isFinite(bytes) && bytes >= 0 && bytes + core.HEAPU8.length + RESERVE_BYTES <= MAX_HEAP_BYTES) return;
  const inUse = core.heapInUse();  // walks the allocator's chunks: only on this slow path
  if (!Number.isFinite(bytes) || bytes + inUse + RESERVE_BYTES > MAX_HEAP_BYTES) {
    throw new MHAError('OUT_OF_MEMORY',
      `${what} needs ${bytes} bytes, more than the wasm heap can give (${MAX_HEAP_BYTES - inUse - RESERVE_BYTES} bytes available of a ${MAX_HEAP_BYTES}-byte maximum)`,
      { bytes });
  }
}

/** A malloc'd block of wasm memory that grows on demand and is freed by free(). */
export class Staging {
  /** @param {object} core the Emscripten module */
  constructor(core) {
    this.core = core;
    this.ptr = 0;
    this.bytes = 0;
  }

  /**
   * Ensures at least `bytes` bytes (16-byte aligned start) and returns the byte offset.
   * @param {number} bytes
   * @param {string} what names the request for the OUT_OF_MEMORY message
   */
  ensure(bytes, what) {
    if (bytes <= this.bytes) return this.ptr;
    this.free();
    checkFits(this.core, bytes, what);
    const ptr = this.core._malloc(bytes);
    if (!ptr) throw new MHAError('OUT_OF_MEMORY', `${what} needs ${bytes} bytes, which the wasm heap cannot give`, { bytes });
    this.ptr = ptr;
    this.bytes = bytes;
    return ptr;
  }

  /** Frees the block. */
  free() {
    if (this.ptr) this.core._free(this.ptr);
    this.ptr = 0;
    this.bytes = 0;
  }
}

/**
 * Lays out consecutive 16-byte-aligned regions: `plan.add(name, bytes)` returns the offset
 * relative to the block start; `plan.total` is the size to ensure.
 */
export class Layout {
  constructor() { this.total = 0; this.at = {}; }
  /** @param {string} name @param {number} bytes */
  add(name, bytes) {
    if (!bytes) { this.at[name] = -1; return; }
    this.at[name] = this.total;
    this.total += Math.ceil(bytes / 16) * 16;
  }
  /** Absolute byte offset of a region, or 0 when it is absent. */
  ptr(base, name) { return this.at[name] >= 0 ? base + this.at[name] : 0; }
}
