import fc from "fast-check";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { assembleKernel, kernelModuleText } from "../wasm/assemble.mjs";
import {
  checkPow,
  instantiateWasmKernel,
  LANE_CANDIDATES,
  POW_LANES,
  powLayout,
  powNonce,
  scanMidstate,
  scanWasm,
  solvePow,
  wasmKernel,
  wasmKernelBytes,
  type WasmKernel,
} from "../src/index.js";

const kernel = (): WasmKernel => {
  const k = wasmKernel();
  if (k === undefined) throw new Error("this runtime cannot run the WebAssembly SIMD kernel");
  return k;
};

describe("proof-of-work WebAssembly kernel (SIMD SHA-256 with the challenge's midstate)", () => {
  it("the committed bytes are exactly what its WAT source assembles to (rebuilt here with wabt)", async () => {
    const rebuilt = await assembleKernel();
    expect(Buffer.from(rebuilt).equals(Buffer.from(wasmKernelBytes()))).toBe(true);
    const committed = readFileSync(new URL("../src/pow/sha256-kernel-wasm.ts", import.meta.url), "utf8");
    expect(committed).toBe(kernelModuleText(rebuilt));
  });

  it("each lane's digest word 0 equals crypto.createHash's for random challenges and nonces (property)", () => {
    const k = kernel();
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 300 }),
        fc.integer({ min: 0, max: POW_LANES - 1 }),
        fc.integer({ min: 0, max: LANE_CANDIDATES / 4 - 1 }),
        (challenge, lane, v) => {
          const layout = powLayout(challenge, lane);
          scanWasm(k, layout, 0, 4 * v, 4 * v + 4, scanMidstate);
          const words = new Int32Array(k.memory.buffer, 384, 4);
          for (let l = 0; l < 4; l++) {
            const nonce = powNonce(layout, 4 * v + l);
            expect(nonce).toMatch(/^[A-Za-z0-9]{8,64}$/);
            const digest = createHash("sha256")
              .update(challenge + nonce, "utf8")
              .digest();
            expect(words[l]).toBe(digest.readInt32BE(0));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("the WASM and JS kernels find the same first solution, and it verifies with createHash (property)", () => {
    const k = kernel();
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 200 }),
        fc.integer({ min: 0, max: POW_LANES - 1 }),
        fc.integer({ min: 0, max: 11 }),
        fc.integer({ min: 0, max: LANE_CANDIDATES - (1 << 16) }),
        (challenge, lane, difficulty, from) => {
          const layout = powLayout(challenge, lane);
          const to = from + (1 << 16);
          const js = scanMidstate(layout, difficulty, from, to);
          expect(scanWasm(k, layout, difficulty, from, to, scanMidstate)).toBe(js);
          if (js >= 0) {
            expect(js).toBeGreaterThanOrEqual(from);
            expect(checkPow(challenge, powNonce(layout, js), difficulty)).toBe(true);
          }
        },
      ),
      { numRuns: 120 },
    );
  });

  it("a flagged vector whose lanes fail the full difficulty (> 32 bits) is skipped, not returned", () => {
    const k = kernel();
    const layout = powLayout("x", 3);
    // difficulty 33 over a small range: the kernel only tests word 0; the exact check must reject.
    const n = scanWasm(k, layout, 33, 0, 1 << 12, scanMidstate);
    expect(n).toBe(scanMidstate(layout, 33, 0, 1 << 12));
    expect(n).toBe(-1);
  });

  it("falls back to the JS kernel where WebAssembly cannot run the bytes", () => {
    expect(instantiateWasmKernel(new Uint8Array([0, 1, 2, 3]))).toBeUndefined();
  });

  it("solvePow answers verify with plain crypto.createHash with either kernel, in workers", async () => {
    const c = "v1-14-1767225600-0123456789abcdef0123456789abcdef-fedcba9876543210fedcba9876543210";
    for (const k of ["wasm", "js"] as const) {
      const n = await solvePow(c, 14, { workers: 2, kernel: k });
      expect(n).toMatch(/^[A-Za-z0-9]{1,64}$/);
      expect(checkPow(c, n, 14)).toBe(true);
    }
  });
});
