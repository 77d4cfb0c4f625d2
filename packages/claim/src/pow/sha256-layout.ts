/**
 * The nonce layout both proof-of-work kernels (JS and WebAssembly) search, and the work done once per
 * challenge. A nonce is `prefix + lo`: `prefix` is filler ("A"s, so the message ends where wanted) plus 4
 * characters naming the `lane`, and `lo` is 4 characters that fill exactly the 32-bit word `q` of the last
 * SHA-256 block. Every block before the last is compressed once; rounds 0..q-1 of the last block are
 * computed once. Candidate `n` (0 ≤ n < {@link LANE_CANDIDATES}) has, with v = n >> 2, i = v / 961,
 * j = 4 · (v % 961) + (n & 3): lo = ALPHA[i / 62] ALPHA[i % 62] ALPHA[j / 62] ALPHA[j % 62].
 */
export interface PowLayout {
  readonly challenge: string;
  /** The nonce's characters before `lo`. */
  readonly prefix: string;
  /** Index (0..12) of the last block's word that holds `lo`. */
  readonly q: number;
  /** The last block's 16 words (big-endian), word q = 0. */
  readonly words: Int32Array;
  /** a..h after rounds 0..q-1 of the last block. */
  readonly state: Int32Array;
  /** The chaining value before the last block (H0..H7). */
  readonly chain: Int32Array;
  /** SHA-256 round constants (carried here so the kernels stay self-contained). */
  readonly k: Int32Array;
  /** The nonce alphabet, [0-9A-Za-z]. */
  readonly alphabet: string;
}

/** Candidates per lane: 3844 · 3844. */
export const LANE_CANDIDATES = 3844 * 3844;

/** Lanes available: 62^4 (each lane is a disjoint slice of nonces). */
export const POW_LANES = 62 ** 4;

/**
 * Lays out `challenge` for `lane` (see {@link PowLayout}). Self-contained (no imports, no module-level
 * names) because worker threads receive it as source text.
 */
export function powLayout(challenge: string, lane: number): PowLayout {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const k = new Int32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
  ]);
  const cb = new TextEncoder().encode(challenge);
  const r = cb.length % 64;
  // The largest q whose nonce length (8 + filler) is 8..64; one of q = 0..12 always fits.
  let q = 12;
  let len = 0;
  for (; q >= 0; q--) {
    len = (((4 * q + 4 - r) % 64) + 64) % 64 || 64;
    if (len >= 8) break;
  }
  let hi = "";
  for (let x = Math.floor(lane) % 62 ** 4, d = 0; d < 4; d++, x = Math.floor(x / 62)) hi = alphabet[x % 62]! + hi;
  const prefix = "A".repeat(len - 8) + hi;
  const total = cb.length + len;
  const msg = new Uint8Array(total + 64 - (total % 64));
  msg.set(cb);
  for (let p = 0; p < prefix.length; p++) msg[cb.length + p] = prefix.charCodeAt(p);
  msg[total] = 0x80;
  const bits = total * 8;
  const words = new Int32Array(16);
  const chain = new Int32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Int32Array(64);
  const last = msg.length - 64;
  let s = new Int32Array(8);
  for (let off = 0; off < msg.length; off += 64) {
    for (let t = 0; t < 16; t++)
      w[t] =
        (msg[off + 4 * t]! << 24) |
        (msg[off + 4 * t + 1]! << 16) |
        (msg[off + 4 * t + 2]! << 8) |
        msg[off + 4 * t + 3]!;
    if (off === last) {
      w[14] = Math.floor(bits / 2 ** 32);
      w[15] = bits >>> 0;
      w[q] = 0;
      words.set(w.subarray(0, 16));
    }
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15]!;
      const y = w[t - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[t] = (s1 + w[t - 7]! + s0 + w[t - 16]!) | 0;
    }
    s = chain.slice();
    const rounds = off === last ? q : 64;
    for (let t = 0; t < rounds; t++) {
      const [a, b, c, d, e, f, g, h] = s as unknown as [number, number, number, number, number, number, number, number];
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
      s.set([(t1 + t2) | 0, a, b, c, (d + t1) | 0, e, f, g]);
    }
    if (off !== last) for (let j = 0; j < 8; j++) chain[j] = (chain[j]! + s[j]!) | 0;
  }
  return { challenge, prefix, q, words, state: s, chain, k, alphabet };
}
