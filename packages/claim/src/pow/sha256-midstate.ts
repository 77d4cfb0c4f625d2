import { LANE_CANDIDATES, powLayout, type PowLayout } from "./sha256-layout.js";

/**
 * The JavaScript proof-of-work kernel: the reference for, and fallback of, the WebAssembly one. Scans
 * candidates `n` in [from, to) of a {@link PowLayout} in order, one at a time on 32-bit integers: per candidate
 * only the word that holds `lo` changes, so it runs the message schedule and rounds q..63 from the layout's
 * precomputed state. Returns the first `n` whose digest has ≥ `difficulty` leading zero bits, or -1.
 * Self-contained (only its arguments) because worker threads receive it as source text.
 */
export function scanMidstate(layout: PowLayout, difficulty: number, from: number, to: number): number {
  const { words, state, chain, k, q, alphabet } = layout;
  const codes = new Int32Array(62);
  for (let c = 0; c < 62; c++) codes[c] = alphabet.charCodeAt(c);
  const w = new Int32Array(64);
  const first = Math.min(difficulty, 32);
  for (let n = from; n < to; n++) {
    const v = n >> 2;
    const i = (v / 961) | 0;
    const j = 4 * (v - 961 * i) + (n & 3);
    w.set(words);
    w[q] = (codes[(i / 62) | 0]! << 24) | (codes[i % 62]! << 16) | (codes[(j / 62) | 0]! << 8) | codes[j % 62]!;
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15]!;
      const y = w[t - 2]!;
      w[t] =
        ((((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) +
          w[t - 7]! +
          (((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) +
          w[t - 16]!) |
        0;
    }
    let a = state[0]!,
      b = state[1]!,
      c = state[2]!,
      d = state[3]!,
      e = state[4]!,
      f = state[5]!,
      g = state[6]!,
      h = state[7]!;
    for (let t = q; t < 64; t++) {
      const t1 =
        (h +
          (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
          ((e & f) ^ (~e & g)) +
          k[t]! +
          w[t]!) |
        0;
      const t2 =
        ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
          ((a & b) ^ (a & c) ^ (b & c))) |
        0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    if (Math.clz32((chain[0]! + a) | 0) < first) continue;
    const digest = [a, b, c, d, e, f, g, h].map((x, idx) => (chain[idx]! + x) | 0);
    let zeros = 0;
    for (const x of digest) {
      zeros += Math.clz32(x);
      if (x !== 0) break;
    }
    if (zeros >= difficulty) return n;
  }
  return -1;
}

/** The nonce of candidate `n` of a layout (self-contained, shipped to workers as source text). */
export function powNonce(layout: PowLayout, n: number): string {
  const A = layout.alphabet;
  const v = n >> 2;
  const i = (v / 961) | 0;
  const j = 4 * (v - 961 * i) + (n & 3);
  return layout.prefix + A[(i / 62) | 0]! + A[i % 62]! + A[(j / 62) | 0]! + A[j % 62]!;
}

/**
 * Solves with the JS kernel in one lane: the first nonce among the lane's first `maxIterations` candidates
 * (at most {@link LANE_CANDIDATES}), or undefined.
 */
export function solveMidstate(
  challenge: string,
  difficulty: number,
  lane: number,
  maxIterations: number,
): string | undefined {
  const layout = powLayout(challenge, lane);
  const n = scanMidstate(layout, difficulty, 0, Math.min(maxIterations, LANE_CANDIDATES));
  return n < 0 ? undefined : powNonce(layout, n);
}
