// Source of the WebAssembly proof-of-work kernel (`sha256_leading_zeros`), as WAT text. The 64 SHA-256 rounds
// are unrolled by this generator (one template per round, nothing else computed here); `build.mjs` assembles
// the text with the `wabt` npm package into `src/pow/sha256-kernel-wasm.ts`, and a test rebuilds it from this
// file and checks the committed bytes match.
//
// What the kernel computes (see src/pow/sha256-layout.ts for the layout the JS side prepares):
//   the message is `challenge + prefix + lo`, where `lo` is 4 nonce characters that fill exactly the 32-bit
//   word `q` (0..12) of the last 64-byte block. Every block before the last is compressed once in JS; rounds
//   0..q-1 of the last block are computed once in JS as well. Memory, 1 page:
//     0..127     the state after round q-1, each of a..h splatted over 4 lanes (i32x4)
//     128..383   the last block's 16 message words, each splatted (word q is overwritten per candidate)
//     384..399   the digest's first word of the 4 lanes last tested (for tests)
//     512..8199  T: 3844 little-endian u16, T[x] = (ALPHA[x / 62] << 8) | ALPHA[x % 62]
//   Candidate n = 4v + lane, with i = v / 961 and m = v % 961, has lo word = T[i] << 16 | T[4m + lane]:
//   4 candidates per v128 vector v, 3844 * 961 vectors in all. `search(v0, v1, q, h0, mask)` scans vectors
//   [v0, v1) and returns the first v where some lane's digest word 0 (= h0 + a) has no bit of `mask` set,
//   or -1.

const K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
];

/** Highest word index that may hold the varying 4 characters (the message must end by byte 55). */
const MAX_Q = 12;

const get = (x) => `(local.get $${x})`;
const rotr = (x, n) => `(v128.or (i32x4.shr_u ${x} (i32.const ${n})) (i32x4.shl ${x} (i32.const ${32 - n})))`;
const xor3 = (p, q, r) => `(v128.xor (v128.xor ${p} ${q}) ${r})`;
const add = (...xs) => xs.reduce((acc, x) => `(i32x4.add ${acc} ${x})`);
const splatConst = (k) => `(v128.const i32x4 ${k | 0} ${k | 0} ${k | 0} ${k | 0})`;

/** One round t: the schedule word (t ≥ 16) and the compression step, with the usual a..h renaming. */
function round(t) {
  const w = (j) => get(`w${j % 16}`);
  const lines = [];
  if (t >= 16) {
    const x = w(t - 15);
    const y = w(t - 2);
    const s0 = xor3(rotr(x, 7), rotr(x, 18), `(i32x4.shr_u ${x} (i32.const 3))`);
    const s1 = xor3(rotr(y, 17), rotr(y, 19), `(i32x4.shr_u ${y} (i32.const 10))`);
    lines.push(`(local.set $w${t % 16} ${add(s1, w(t - 7), s0, w(t - 16))})`);
  }
  const e = get("e");
  const a = get("a");
  const sigma1 = xor3(rotr(e, 6), rotr(e, 11), rotr(e, 25));
  const ch = `(v128.bitselect ${get("f")} ${get("g")} ${e})`;
  lines.push(`(local.set $t1 ${add(get("h"), sigma1, ch, `(i32x4.add ${w(t)} ${splatConst(K[t])})`)})`);
  const sigma0 = xor3(rotr(a, 2), rotr(a, 13), rotr(a, 22));
  const maj = `(v128.bitselect ${get("c")} ${a} (v128.xor ${a} ${get("b")}))`;
  lines.push(`(local.set $t2 (i32x4.add ${sigma0} ${maj}))`);
  lines.push(
    `(local.set $h ${get("g")}) (local.set $g ${get("f")}) (local.set $f ${e})`,
    `(local.set $e (i32x4.add ${get("d")} ${get("t1")}))`,
    `(local.set $d ${get("c")}) (local.set $c ${get("b")}) (local.set $b ${a})`,
    `(local.set $a (i32x4.add ${get("t1")} ${get("t2")}))`,
  );
  return lines.join("\n      ");
}

/** Rounds 0..MAX_Q entered at round q (a jump table into nested blocks), then rounds MAX_Q+1..63. */
function rounds() {
  const labels = Array.from({ length: MAX_Q + 1 }, (_, k) => `$r${k}`);
  let body = `(br_table ${labels.join(" ")} ${labels[MAX_Q]} (local.get $q))`;
  for (let k = 0; k <= MAX_Q; k++) body = `(block $r${k}\n      ${body})\n      ${round(k)}`;
  const rest = [];
  for (let t = MAX_Q + 1; t < 64; t++) rest.push(round(t));
  return `${body}\n      ${rest.join("\n      ")}`;
}

/** The whole module as WAT text (deterministic: the same text on every call). */
export function sha256KernelWat() {
  const regs = ["a", "b", "c", "d", "e", "f", "g", "h"];
  const v128Locals = [...regs, ...Array.from({ length: 16 }, (_, j) => `w${j}`), "t1", "t2", "hi", "vh0", "vmask"];
  const loadState = regs.map((r, k) => `(local.set $${r} (v128.load offset=${k * 16} (i32.const 0)))`);
  const loadWords = Array.from(
    { length: 16 },
    (_, j) => `(local.set $w${j} (v128.load offset=${128 + j * 16} (i32.const 0)))`,
  );
  return `(module
  (memory (export "memory") 1)
  (func (export "search") (param $v0 i32) (param $v1 i32) (param $q i32) (param $h0 i32) (param $mask i32) (result i32)
    (local $v i32) (local $i i32) (local $wq i32)
    ${v128Locals.map((n) => `(local $${n} v128)`).join(" ")}
    (local.set $vh0 (i32x4.splat (local.get $h0)))
    (local.set $vmask (i32x4.splat (local.get $mask)))
    (local.set $wq (i32.add (i32.const 128) (i32.shl (local.get $q) (i32.const 4))))
    (local.set $v (local.get $v0))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $v) (local.get $v1)))
        (local.set $i (i32.div_u (local.get $v) (i32.const 961)))
        (local.set $hi (i32x4.splat (i32.shl (i32.load16_u offset=512 (i32.shl (local.get $i) (i32.const 1))) (i32.const 16))))
        (v128.store (local.get $wq) (v128.or (local.get $hi)
          (v128.load16x4_u offset=512 (i32.shl (i32.sub (local.get $v) (i32.mul (local.get $i) (i32.const 961))) (i32.const 3)))))
        ${loadState.join("\n        ")}
        ${loadWords.join("\n        ")}
        ${rounds()}
        (local.set $a (i32x4.add (local.get $a) (local.get $vh0)))
        (v128.store offset=384 (i32.const 0) (local.get $a))
        (if (v128.any_true (i32x4.eq (v128.and (local.get $a) (local.get $vmask)) (v128.const i32x4 0 0 0 0)))
          (then (return (local.get $v))))
        (local.set $v (i32.add (local.get $v) (i32.const 1)))
        (br $next)))
    (i32.const -1)))
`;
}
