import { SHA256_KERNEL_WASM_BASE64 } from "./sha256-kernel-wasm.js";
import type { PowLayout } from "./sha256-layout.js";

/** An instantiated WebAssembly kernel (see packages/claim/wasm/sha256-kernel-wat.mjs for its contract). */
export interface WasmKernel {
  readonly memory: { readonly buffer: ArrayBuffer };
  /** Scans vectors [v0, v1) (4 candidates each); the first vector with a lane under `mask`, or -1. */
  readonly search: (v0: number, v1: number, q: number, h0: number, mask: number) => number;
}

/** The kernel's bytes (decoded from the committed base64). */
export function wasmKernelBytes(): Uint8Array {
  return new Uint8Array(Buffer.from(SHA256_KERNEL_WASM_BASE64, "base64"));
}

/**
 * Instantiates the kernel from its bytes and fills its character table, or returns undefined where this
 * runtime cannot run it (no WebAssembly or no SIMD): callers fall back to the JS kernel. Self-contained
 * (shipped to worker threads as source text).
 */
export function instantiateWasmKernel(bytes: Uint8Array): WasmKernel | undefined {
  const wasm = (
    globalThis as unknown as {
      WebAssembly?: {
        validate(bytes: Uint8Array): boolean;
        Module: new (bytes: Uint8Array) => object;
        Instance: new (module: object, imports: object) => { exports: unknown };
      };
    }
  ).WebAssembly;
  if (wasm === undefined || !wasm.validate(bytes)) return undefined;
  const instance = new wasm.Instance(new wasm.Module(bytes), {});
  const exports = instance.exports as WasmKernel;
  const A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const view = new DataView(exports.memory.buffer);
  for (let x = 0; x < 3844; x++)
    view.setUint16(512 + 2 * x, (A.charCodeAt((x / 62) | 0) << 8) | A.charCodeAt(x % 62), true);
  return exports;
}

/**
 * Scans candidates [from, to) of `layout` with the WebAssembly kernel, 4 per SIMD vector, and returns the first
 * `n` whose digest has ≥ `difficulty` leading zero bits, or -1 — the same answer as the JS kernel, which it
 * takes as `exact` and runs on the 4 candidates of any vector the kernel flags (the kernel tests only the
 * digest's first word). Self-contained (shipped to worker threads as source text).
 */
export function scanWasm(
  kernel: WasmKernel,
  layout: PowLayout,
  difficulty: number,
  from: number,
  to: number,
  exact: (layout: PowLayout, difficulty: number, from: number, to: number) => number,
): number {
  const mem = new Int32Array(kernel.memory.buffer, 0, 96);
  for (let r = 0; r < 8; r++) mem.fill(layout.state[r]!, 4 * r, 4 * r + 4);
  for (let t = 0; t < 16; t++) mem.fill(layout.words[t]!, 32 + 4 * t, 36 + 4 * t);
  const mask = difficulty <= 0 ? 0 : difficulty >= 32 ? -1 : -1 << (32 - difficulty);
  const end = Math.ceil(to / 4);
  let v = Math.floor(from / 4);
  while (v < end) {
    const hit = kernel.search(v, end, layout.q, layout.chain[0]!, mask);
    if (hit < 0) return -1;
    const n = exact(layout, difficulty, Math.max(4 * hit, from), Math.min(4 * hit + 4, to));
    if (n >= 0) return n;
    v = hit + 1;
  }
  return -1;
}
