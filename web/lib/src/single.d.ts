/**
 * mha-wasm/single: the same API as `mha-wasm`, with the `.wasm` embedded in JavaScript (base64),
 * for hosts that cannot serve `.wasm` files. It embeds the simd and scalar tiers (not relaxed-simd,
 * which would add its own base64). `createMHA()` needs no options; `simd` or `tier` forces a build,
 * and a `wasmBinary`, `wasmURL` or `locateFile` given is used instead of the embedded bytes.
 * @packageDocumentation
 */
export * from './index.js';
