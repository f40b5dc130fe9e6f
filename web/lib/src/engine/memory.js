/**
 * Wasm memory for the JS side: one growable staging area per owner (layer, cache, decoder), reused
 * across calls, with an up-front out-of-memory check; stage(), which lays out, copies in and writes
 * the argument structs of every core call.
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
  if (Number.isFinite(bytes) && bytes >= 0 && bytes + heapViews(core).heapBytes() + RESERVE_BYTES <= MAX_HEAP_BYTES) return;
  const inUse = core.heapInUse();  // walks the allocator's chunks: only on this slow path
  if (!Number.isFinite(bytes) || bytes + inUse + RESERVE_BYTES > MAX_HEAP_BYTES) {
    throw new MHAError('OUT_OF_MEMORY',
      `${what} needs ${bytes} bytes, more than the wasm heap can give (${MAX_HEAP_BYTES - inUse - RESERVE_BYTES} bytes available of a ${MAX_HEAP_BYTES}-byte maximum)`,
      { bytes });
  }
}

/** A malloc'd area of wasm memory that grows on demand and is freed by free(). */
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

  /** Frees the area. */
  free() {
    if (this.ptr) this.core._free(this.ptr);
    this.ptr = 0;
    this.bytes = 0;
  }
}

/**
 * Lays out consecutive 16-byte-aligned regions: `plan.add(name, bytes)` returns the offset
 * relative to the area's start; `plan.total` is the size to ensure.
 */
export class Layout {
  constructor() { this.total = 0; this.at = {}; }
  /** @param {string} name @param {number} bytes */
  add(name, bytes) {
    if (!bytes) { this.at[name] = -1; return; }
    this.at[name] = this.total;
    this.total += Math.ceil(bytes / 16) * 16;
  }
  /** Makes `name` the same region as `of` (added before), e.g. an output written over its input. */
  alias(name, of) { this.at[name] = this.at[of]; }
  /**
   * Absolute byte offset of a region, or 0 when it was added with no bytes (absent).
   * @throws {Error} a plain Error for a name never added (a bug of this package: a misspelt region
   *   would otherwise pass a null pointer to the core)
   */
  ptr(base, name) {
    if (!Object.hasOwn(this.at, name)) throw new Error(`Layout: no region ${JSON.stringify(name)}`);
    return this.at[name] >= 0 ? base + this.at[name] : 0;
  }
}

/**
 * Writes an argument struct of the core (cpp/bindings: embind.cpp, embind_decoder.cpp; layouts from
 * core-tables.js) at byte offset `at`: every field of the core's layout {bytes, fields: {name: byte
 * offset}, kinds: {name: 'i32' | 'f32' | 'ptr'}} from `values` (numbers, booleans as 0/1), so the
 * field list and the layout live only in the core. A field the core has and `values` lacks, or the
 * other way round, is a bug of this package (the two sides disagree) and throws a plain Error.
 * @param {object} core the Emscripten module
 * @param {{bytes: number, fields: object, kinds: object}} layout
 * @param {number} at byte offset (4-byte aligned)
 * @param {object} values {field name: value}
 * @param {string} what names the call in the error
 */
export function writeArgs(core, layout, at, values, what) {
  const { i32, u32, f32 } = heapViews(core).fresh();
  for (const name of Object.keys(layout.fields)) {
    if (!(name in values)) throw new Error(`${what}: the core's argument struct has a field ${name} this API does not fill`);
    const i = (at + layout.fields[name]) >> 2;
    const v = +values[name];
    const kind = layout.kinds[name];
    if (kind === 'f32') f32[i] = v;
    else if (kind === 'ptr') u32[i] = v;
    else i32[i] = v;
  }
  for (const name of Object.keys(values)) {
    if (!(name in layout.fields)) throw new Error(`${what}: the core's argument struct has no field ${name}`);
  }
}

/**
 * Lays out one call's wasm memory: its argument structs first, then its regions.
 * @param {Array<[string, {bytes: number}]>} args [name, layout] of each argument struct
 * @param {Array<[string, ArrayBufferView|number|{alias: string}|null|undefined]>} regions [name,
 *   content]: a typed array (its bytes, written by stage), a byte count (reserved: an output), an
 *   alias of an earlier region, or null/undefined/0 (absent: address 0)
 * @returns {Layout}
 */
export function stageLayout(args, regions) {
  const lay = new Layout();
  for (let i = 0; i < args.length; i++) lay.add(args[i][0], args[i][1].bytes);
  for (let i = 0; i < regions.length; i++) {
    const name = regions[i][0], c = regions[i][1];
    if (ArrayBuffer.isView(c)) lay.add(name, c.byteLength);
    else if (c && typeof c === 'object') lay.alias(name, c.alias);
    else lay.add(name, c || 0);
  }
  return lay;
}

/**
 * Stages one core call in `staging` (the one way every call of this package reaches the core):
 * lays out its argument structs and regions (stageLayout), grows the staging memory when needed,
 * copies the typed arrays of `regions` in, and writes each argument struct from its values.
 * @param {object} core the Emscripten module
 * @param {Staging} staging the memory reused across the owner's calls
 * @param {Array<[string, {bytes: number, fields: object, kinds: object}, (P: (name: string) => number) => object]>} args
 *   [name, layout from coreTables, values of its fields given P(region) → byte offset (0 = absent)]
 * @param {Array} regions as stageLayout
 * @param {string} what names the call in OUT_OF_MEMORY and layout errors
 * @param {{fits?: string, extraBytes?: number}} [opts] fits: check first that the call fits in the
 *   heap with `extraBytes` more (the core's workspace), naming it so in OUT_OF_MEMORY
 * @returns {{base: number, lay: Layout, P: (name: string) => number}} P: a region's byte offset
 * @throws {MHAError} OUT_OF_MEMORY
 */
export function stage(core, staging, args, regions, what, opts = {}) {
  const lay = stageLayout(args, regions);
  if (opts.fits) checkFits(core, lay.total + (opts.extraBytes ?? 0) - staging.bytes, opts.fits);
  const base = staging.ensure(lay.total, what);
  const P = (name) => lay.ptr(base, name);
  const { u8 } = heapViews(core).fresh();
  for (let i = 0; i < regions.length; i++) {
    const c = regions[i][1];
    if (ArrayBuffer.isView(c) && c.byteLength) u8.set(new Uint8Array(c.buffer, c.byteOffset, c.byteLength), P(regions[i][0]));
  }
  for (let i = 0; i < args.length; i++) writeArgs(core, args[i][1], P(args[i][0]), args[i][2](P), what);
  return { base, lay, P };
}

/**
 * Typed-array views of one module's wasm memory, shared by its layers and caches. Reading
 * `core.HEAPF32` costs a slow lookup on every call (the Emscripten module object has hundreds of
 * properties, so V8 keeps it in dictionary mode); these are plain fields. Growth of the memory
 * detaches the old views of an unshared memory (length 0); a shared memory (the threaded builds)
 * keeps them valid but as long as before, and any thread may have grown it. `views.fresh()` then
 * makes views of the current buffer. With a shared memory it first reads the allocator's break
 * (a word of the heap that every thread's malloc moves): while the views reach the break, they
 * reach every allocation, and `memory.buffer` (which makes a new SharedArrayBuffer object when
 * the memory has grown, a cost paid on every call otherwise) is not touched.
 */
class HeapViews {
  /** @param {object} core the Emscripten module */
  constructor(core) {
    this.core = core;
    // The threaded builds export their (shared) memory; its buffer is the current one.
    this.memory = core.wasmMemory instanceof WebAssembly.Memory ? core.wasmMemory : null;
    this.sbrkIndex = this.memory !== null ? core.sbrkWordAddress() >>> 2 : 0;
    this._forward = null;
    this.fresh();
  }

  /** Returns this, with views of the current memory (made anew after a growth). */
  fresh() {
    if (this.memory !== null) {
      if (this.u8 !== undefined && this.u32[this.sbrkIndex] <= this.u8.length) return this;
      const buf = this.memory.buffer;
      if (this.u8 === undefined || this.u8.length !== buf.byteLength) {
        this.f32 = new Float32Array(buf);
        this.i32 = new Int32Array(buf);
        this.u32 = new Uint32Array(buf);
        this.u8 = new Uint8Array(buf);
      }
    } else if (this.f32 === undefined || this.f32.length === 0) {
      this.f32 = this.core.HEAPF32;
      this.i32 = this.core.HEAP32;
      this.u32 = this.core.HEAPU32;
      this.u8 = this.core.HEAPU8;
    }
    return this;
  }

  /** Bytes of the wasm memory now (its buffer's length: views may be shorter, see fresh()). */
  heapBytes() {
    return this.memory !== null ? this.memory.buffer.byteLength : this.fresh().u8.length;
  }

  /**
   * The plain export `_mha_layer_forward(handle, args)` (embind.cpp). The module first holds a
   * stand-in that looks the real export up on every call until its first call replaces the
   * property; the raw function is taken from the module after that first call.
   * @returns {number} 0 or an error code
   */
  forward(handle, args) {
    if (this._forward !== null) return this._forward(handle, args);
    const status = this.core._mha_layer_forward(handle, args);
    this._forward = this.core._mha_layer_forward;
    return status;
  }

  /**
   * A Float32Array view of n floats at byte offset ptr of the current memory (call fresh() first
   * after anything that may have grown it).
   * @param {number} ptr byte offset (multiple of 4)
   * @param {number} n
   */
  floats(ptr, n) {
    const at = ptr >>> 2;
    return this.f32.subarray(at, at + n);
  }
}
const viewsOf = new WeakMap();

/**
 * The shared HeapViews of a module.
 * @param {object} core the Emscripten module
 * @returns {HeapViews}
 */
export function heapViews(core) {
  let v = viewsOf.get(core);
  if (!v) viewsOf.set(core, (v = new HeapViews(core)));
  return v;
}

// Results are copied out of wasm memory into fresh Float32Arrays. A Float32Array of more than 64
// bytes gets its own off-heap backing store, whose allocation and garbage collection cost more
// than a small forward itself (docs/performance.md, "What the speed comes from"). Small results are therefore
// carved out of a shared 16 KB ArrayBuffer, as Node's Buffer pool does for small Buffers.
const POOL_FLOATS = 4096;   // one slab: 16 KB
const POOLED_MAX = 512;     // results of at most 2 KB come from a slab
let slab = null;
let slabUsed = POOL_FLOATS;

/**
 * Copies `src`, a view of a result in wasm memory, into a new Float32Array. Results of at most
 * 2 KB are views into a shared 16 KB ArrayBuffer: `.buffer` is not theirs alone, and one live
 * result keeps the whole slab alive. Copy with `.slice()` before transferring: transferring the
 * shared buffer empties every other view of it (a detached slab is then replaced, so later calls
 * still work). Larger results have their own buffer.
 * @param {Float32Array} src the values, a view of the module's HEAPF32 (current: see HeapViews)
 * @returns {Float32Array}
 */
export function readFloats(src) {
  const n = src.length;
  if (n > POOLED_MAX) return src.slice();
  if (slab === null || slabUsed + n > POOL_FLOATS || slab.byteLength === 0) {  // none yet, full, or detached by a transfer
    slab = new ArrayBuffer(POOL_FLOATS * 4);
    slabUsed = 0;
  }
  const out = new Float32Array(slab, slabUsed * 4, n);
  slabUsed += (n + 3) & ~3;  // keep every view 16-byte aligned
  out.set(src);
  return out;
}
