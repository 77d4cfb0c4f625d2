#!/usr/bin/env node
// Assembles the proof-of-work kernel from its source (`sha256-kernel-wat.mjs`) with the `wabt` npm package and
// writes the bytes into `src/pow/sha256-kernel-wasm.ts` (base64), so the built package needs no build step of
// its own and no binary download. Run after changing the source: `node packages/claim/wasm/build.mjs`.
// `test/claim-pow-wasm.test.ts` assembles the source again and fails if the committed bytes differ.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { assembleKernel, kernelModuleText } from "./assemble.mjs";

const bytes = await assembleKernel();
const out = fileURLToPath(new URL("../src/pow/sha256-kernel-wasm.ts", import.meta.url));
writeFileSync(out, kernelModuleText(bytes));
process.stdout.write(`wrote ${out} (${bytes.length} bytes of wasm)\n`);
