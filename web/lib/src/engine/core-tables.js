/**
 * What the core says about itself, asked once per wasm module: the layouts of its argument structs
 * (cpp/bindings/embind.cpp: layerLayout, passportLayout, forwardLayout, kvStepLayout;
 * embind_decoder.cpp: decoderLayout) and its enumerations (embind.cpp, enums(): the error codes, the
 * mask, norm and MLP kinds). The JS side keeps no copy of any of them: every argument field, offset,
 * kind and enumeration value comes from here.
 * @module core-tables
 */

const tablesOf = new WeakMap();

/**
 * The core's self-description, read on first use and kept per module.
 * @param {object} core the Emscripten module
 * @returns {{layer: object, passport: object, forward: object, kvStep: object, decoder: {init: object,
 *   block: object, call: object}, enums: {codes: string[], maskKinds: object, normKinds: object,
 *   mlpKinds: object}}} layouts {bytes, fields: {name: byte offset}, kinds: {name: 'i32'|'f32'|'ptr'}};
 *   enumerations {name: value} (codes: name by value)
 */
export function coreTables(core) {
  let t = tablesOf.get(core);
  if (!t) {
    t = Object.freeze({
      layer: core.layerLayout(),
      passport: core.passportLayout(),
      forward: core.forwardLayout(),
      kvStep: core.kvStepLayout(),
      decoder: core.decoderLayout(),
      enums: core.enums(),
    });
    tablesOf.set(core, t);
  }
  return t;
}

/**
 * The core's value of one enumeration entry, e.g. `enumValue(core, 'normKinds', 'rmsnorm')`.
 * @param {object} core the Emscripten module
 * @param {'maskKinds'|'normKinds'|'mlpKinds'} kind the enumeration
 * @param {string} name the entry, as the core names it
 * @returns {number}
 * @throws {Error} a plain Error when the core has no such entry (a bug of this package: callers
 *   validate user input against the same table first)
 */
export function enumValue(core, kind, name) {
  const table = coreTables(core).enums[kind];
  if (!table || !Object.hasOwn(table, name)) throw new Error(`the core's ${kind} has no entry ${JSON.stringify(name)}`);
  return table[name];
}
