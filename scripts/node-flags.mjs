// The Node flags that turn on relaxed SIMD, for the scripts and tests that spawn Node processes.
import { spawnSync } from 'node:child_process';

export const RELAXED_SIMD_FLAG = '--experimental-wasm-relaxed-simd';

/**
 * The flags a Node binary needs to run the relaxed-simd tier: [RELAXED_SIMD_FLAG] when that Node
 * knows the flag (Node 20 ships relaxed SIMD behind it), else [] (later Nodes run it by default and
 * may not know the flag).
 * @param {string} [node] path of the Node binary (default: this one)
 * @returns {string[]}
 */
export function relaxedSimdFlags(node = process.execPath) {
  return spawnSync(node, [RELAXED_SIMD_FLAG, '-e', '0']).status === 0 ? [RELAXED_SIMD_FLAG] : [];
}
