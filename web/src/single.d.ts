/**
 * mha-wasm/single: the same API as `mha-wasm`, with the `.wasm` embedded in JavaScript (base64),
 * for hosts that cannot serve `.wasm` files. `createMHA()` needs no options; `simd` forces a build,
 * and a `wasmBinary`, `wasmURL` or `locateFile` given is used instead of the embedded bytes.
 * @packageDocumentation
 */
export * from './index.js';
