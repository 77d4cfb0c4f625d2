/**
 * A proof-of-work kernel that reuses the challenge's SHA-256 midstate. The nonce is laid out so that every
 * full 64-byte block of `challenge + nonce` is constant (compressed once), and only the last block varies,
 * in its final 6 bytes; the rounds before the first varying word are computed once as well. Per candidate
 * it runs the message schedule and the remaining rounds on 32-bit integers, and checks only the digest's
 * first word(s). Self-contained (no imports, no closures) because it is also shipped to worker threads as
 * source text.
 *
 * Returns the first nonce found in `lane` (nonce = lane char + filler + 6 base62 digits), or undefined after
 * `maxIterations` candidates.
 */
export function solveMidstate(
  challenge: string,
  difficulty: number,
  lane: number,
  maxIterations: number,
): string | undefined {
  const ALPHA = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const K = new Int32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
  ]);
  const V = 6;
  const cb = new TextEncoder().encode(challenge);
  let L = V + 1;
  while ((cb.length + L) % 64 < V || (cb.length + L) % 64 > 55) L++;
  const total = cb.length + L;
  const msg = new Uint8Array(total);
  msg.set(cb);
  msg[cb.length] = ALPHA.charCodeAt(lane % 62);
  for (let i = cb.length + 1; i < total; i++) msg[i] = 65;
  const H = new Int32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const W = new Int32Array(64);
  const compress = (block: Uint8Array, off: number): void => {
    for (let t = 0; t < 16; t++)
      W[t] =
        (block[off + 4 * t]! << 24) |
        (block[off + 4 * t + 1]! << 16) |
        (block[off + 4 * t + 2]! << 8) |
        block[off + 4 * t + 3]!;
    for (let t = 16; t < 64; t++) {
      const x = W[t - 15]!,
        y = W[t - 2]!;
      W[t] =
        ((((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) +
          W[t - 16]! +
          (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) +
          W[t - 7]!) |
        0;
    }
    let a = H[0]!,
      b = H[1]!,
      c = H[2]!,
      d = H[3]!,
      e = H[4]!,
      f = H[5]!,
      g = H[6]!,
      h = H[7]!;
    for (let t = 0; t < 64; t++) {
      const t1 =
        (h +
          (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
          ((e & f) ^ (~e & g)) +
          K[t]! +
          W[t]!) |
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
    H[0] = (H[0]! + a) | 0;
    H[1] = (H[1]! + b) | 0;
    H[2] = (H[2]! + c) | 0;
    H[3] = (H[3]! + d) | 0;
    H[4] = (H[4]! + e) | 0;
    H[5] = (H[5]! + f) | 0;
    H[6] = (H[6]! + g) | 0;
    H[7] = (H[7]! + h) | 0;
  };
  const full = Math.floor(total / 64);
  for (let i = 0; i < full; i++) compress(msg, i * 64);
  const k = total % 64;
  const last = new Uint8Array(64);
  last.set(msg.subarray(full * 64));
  last[k] = 0x80;
  const bits = total * 8;
  last[60] = (bits >>> 24) & 255;
  last[61] = (bits >>> 16) & 255;
  last[62] = (bits >>> 8) & 255;
  last[63] = bits & 255;
  const M = new Int32Array(16);
  for (let t = 0; t < 16; t++)
    M[t] = (last[4 * t]! << 24) | (last[4 * t + 1]! << 16) | (last[4 * t + 2]! << 8) | last[4 * t + 3]!;
  const fw = (k - V) >> 2;
  const lw = (k - 1) >> 2;
  // Rounds before the first varying word are the same for every candidate.
  let pa = H[0]!,
    pb = H[1]!,
    pc = H[2]!,
    pd = H[3]!,
    pe = H[4]!,
    pf = H[5]!,
    pg = H[6]!,
    ph = H[7]!;
  for (let t = 0; t < fw; t++) {
    const t1 =
      (ph +
        (((pe >>> 6) | (pe << 26)) ^ ((pe >>> 11) | (pe << 21)) ^ ((pe >>> 25) | (pe << 7))) +
        ((pe & pf) ^ (~pe & pg)) +
        K[t]! +
        M[t]!) |
      0;
    const t2 =
      ((((pa >>> 2) | (pa << 30)) ^ ((pa >>> 13) | (pa << 19)) ^ ((pa >>> 22) | (pa << 10))) +
        ((pa & pb) ^ (pa & pc) ^ (pb & pc))) |
      0;
    ph = pg;
    pg = pf;
    pf = pe;
    pe = (pd + t1) | 0;
    pd = pc;
    pc = pb;
    pb = pa;
    pa = (t1 + t2) | 0;
  }
  const h0 = H[0]!,
    h1 = H[1]!;
  const digits = new Int32Array(V);
  const codes = new Int32Array(62);
  for (let i = 0; i < 62; i++) codes[i] = ALPHA.charCodeAt(i);
  for (let n = 0; n < maxIterations; n++) {
    for (let i = 0; i < V; i++) last[k - V + i] = codes[digits[i]!]!;
    for (let t = fw; t <= lw; t++)
      M[t] = (last[4 * t]! << 24) | (last[4 * t + 1]! << 16) | (last[4 * t + 2]! << 8) | last[4 * t + 3]!;
    for (let t = 0; t < 16; t++) W[t] = M[t]!;
    for (let t = 16; t < 64; t++) {
      const x = W[t - 15]!,
        y = W[t - 2]!;
      W[t] =
        ((((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) +
          W[t - 16]! +
          (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) +
          W[t - 7]!) |
        0;
    }
    let a = pa,
      b = pb,
      c = pc,
      d = pd,
      e = pe,
      f = pf,
      g = pg,
      h = ph;
    for (let t = fw; t < 64; t++) {
      const t1 =
        (h +
          (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
          ((e & f) ^ (~e & g)) +
          K[t]! +
          W[t]!) |
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
    const d0 = (h0 + a) | 0;
    const z = Math.clz32(d0);
    if (z >= difficulty || (z === 32 && 32 + Math.clz32((h1 + b) | 0) >= difficulty)) {
      return (
        new TextDecoder().decode(msg.subarray(cb.length, total - V)) + new TextDecoder().decode(last.subarray(k - V, k))
      );
    }
    for (let i = V - 1; i >= 0; i--) {
      if (digits[i] === 61) digits[i] = 0;
      else {
        digits[i] = digits[i]! + 1;
        break;
      }
    }
  }
  return undefined;
}
