import { scryptSync } from "node:crypto";
import { fail, ok, type Issue, type Result } from "../issues/index.js";
import { ed25519KeyPairFromSeed, ED25519_KEY_BYTES } from "../proof/index.js";
import {
  aesGcmOpen,
  aesGcmSeal,
  hexBytes,
  IV_BYTES,
  KEY_BYTES,
  SALT_BYTES,
  TAG_BYTES,
  type RandomBytes,
} from "./aead.js";

/** scrypt cost parameters; `log_n` is log2 of N. */
export interface ScryptParams {
  readonly log_n: number;
  readonly r: number;
  readonly p: number;
}

/** Default scrypt cost: N = 2^17, r = 8, p = 1 (128 MiB, about a second): the OWASP recommendation. */
export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { log_n: 17, r: 8, p: 1 };
/**
 * The weakest scrypt cost accepted, when reading a key file and when writing one: N = 2^15, r = 8, p = 1
 * (32 MiB). RFC 7914 §2 and the scrypt paper set r = 8; N = 2^15 is the interactive floor Go's
 * x/crypto/scrypt recommends (OWASP asks 2^17, our default). A key file below it is refused
 * (`key_kdf_too_weak`): written by a weaker tool, or edited so that guessing the passphrase is cheap.
 */
export const SCRYPT_FLOOR: ScryptParams = { log_n: 15, r: 8, p: 1 };
/** Bounds accepted (inclusive), so a planted file cannot make us spin or exhaust memory. */
export const SCRYPT_BOUNDS = { log_n: [15, 20], r: [8, 16], p: [1, 4] } as const;
/** Most memory scrypt may use when reading a key file (128 · N · r bytes): 256 MiB, twice the default. */
export const SCRYPT_MAX_MEMORY = 256 * 1024 * 1024;

/** `N = 2^17, r = 8, p = 1`. */
function describeScrypt(params: ScryptParams): string {
  return `N = 2^${params.log_n}, r = ${params.r}, p = ${params.p}`;
}

/**
 * Why scrypt parameters are refused, or `undefined` when they are within bounds: too weak
 * (`key_kdf_too_weak`: below {@link SCRYPT_FLOOR}) or too costly (`key_kdf_too_costly`: above
 * {@link SCRYPT_BOUNDS} or {@link SCRYPT_MAX_MEMORY}). Values that are not integers are not checked here.
 */
export function checkScryptParams(params: ScryptParams): Issue | undefined {
  const { log_n, r, p } = params;
  const [, maxLogN] = SCRYPT_BOUNDS.log_n;
  const [, maxR] = SCRYPT_BOUNDS.r;
  const [, maxP] = SCRYPT_BOUNDS.p;
  if (log_n < SCRYPT_FLOOR.log_n || r < SCRYPT_FLOOR.r || p < SCRYPT_FLOOR.p) {
    return issue(
      { code: "key_kdf_too_weak" },
      `private key file: scrypt parameters too weak (${describeScrypt(params)}; at least ${describeScrypt(SCRYPT_FLOOR)}): ` +
        "the file was written by a weaker tool or edited to make guessing the passphrase cheap; " +
        "do not trust it, restore keys/private.key from a backup or make a new key with `acp init --force`",
    );
  }
  if (log_n > maxLogN || r > maxR || p > maxP || 128 * 2 ** log_n * r > SCRYPT_MAX_MEMORY) {
    return issue(
      { code: "key_kdf_too_costly" },
      `private key file: scrypt parameters too costly (${describeScrypt(params)}; at most N = 2^${maxLogN}, r = ${maxR}, p = ${maxP} and ` +
        `${SCRYPT_MAX_MEMORY / 1024 / 1024} MiB): not written by acp; restore keys/private.key from a backup or make a new key with \`acp init --force\``,
    );
  }
  return undefined;
}

/** `keys/private.key` sealed with a passphrase (scrypt → AES-256-GCM; the public key is authenticated). */
export interface EncryptedPrivateKeyFileV1 {
  readonly type: "acp_private_key";
  readonly version: 1;
  readonly algorithm: "Ed25519";
  readonly public_key: string;
  readonly protection: "scrypt-aes-256-gcm";
  readonly kdf: { readonly name: "scrypt"; readonly salt: string } & ScryptParams;
  readonly iv: string;
  readonly tag: string;
  readonly ciphertext: string;
}

/** `keys/private.key` stored without a passphrase (`acp init --no-passphrase`), marked so. */
export interface PlainPrivateKeyFileV1 {
  readonly type: "acp_private_key";
  readonly version: 1;
  readonly algorithm: "Ed25519";
  readonly public_key: string;
  readonly protection: "none";
  readonly warning: string;
  readonly seed: string;
}

export type PrivateKeyFileV1 = EncryptedPrivateKeyFileV1 | PlainPrivateKeyFileV1;

const PLAIN_WARNING =
  "UNENCRYPTED: anyone who can read this file can sign approvals; re-run `acp init --force` with a passphrase";

function kek(passphrase: string, salt: Uint8Array, params: ScryptParams): Uint8Array {
  const N = 2 ** params.log_n;
  return scryptSync(passphrase.normalize("NFC"), salt, KEY_BYTES, {
    N,
    r: params.r,
    p: params.p,
    maxmem: 256 * N * params.r,
  });
}

/** Wraps an Ed25519 seed for `keys/private.key`: sealed with a scrypt key from the passphrase, or plain when it is null. */
export function wrapPrivateKey(
  seed: Uint8Array,
  passphrase: string | null,
  randomBytes: RandomBytes,
  params: ScryptParams = DEFAULT_SCRYPT_PARAMS,
): PrivateKeyFileV1 {
  const public_key = ed25519KeyPairFromSeed(seed).publicKeyHex;
  const head = { type: "acp_private_key", version: 1, algorithm: "Ed25519", public_key } as const;
  if (passphrase === null)
    return { ...head, protection: "none", warning: PLAIN_WARNING, seed: Buffer.from(seed).toString("hex") };
  if (passphrase.length === 0) throw new RangeError("passphrase must not be empty");
  const refused = checkScryptParams(params);
  if (refused !== undefined) throw new RangeError(refused.message);
  const salt = randomBytes(SALT_BYTES);
  const sealed = aesGcmSeal(kek(passphrase, salt, params), seed, `acp private key ${public_key}`, randomBytes);
  return {
    ...head,
    protection: "scrypt-aes-256-gcm",
    kdf: { name: "scrypt", salt: Buffer.from(salt).toString("hex"), ...params },
    iv: Buffer.from(sealed.iv).toString("hex"),
    tag: Buffer.from(sealed.tag).toString("hex"),
    ciphertext: Buffer.from(sealed.ciphertext).toString("hex"),
  };
}

function issue({ code }: { code: string }, message: string): Issue {
  return { code, path: [], message };
}

function isInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value);
}

/** Parses the text of `keys/private.key`; a truncated or corrupted file is `key_file_malformed`. */
export function parsePrivateKeyFile(text: string): Result<PrivateKeyFileV1> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return fail([issue({ code: "key_file_malformed" }, "private key file is not json (truncated or corrupted)")]);
  }
  const f = (v !== null && typeof v === "object" ? v : {}) as Record<string, unknown>;
  const bad = (what: string): Result<PrivateKeyFileV1> =>
    fail([issue({ code: "key_file_malformed" }, `private key file: ${what}`)]);
  if (f["type"] !== "acp_private_key" || f["version"] !== 1 || f["algorithm"] !== "Ed25519")
    return bad("not an acp ed25519 key file (version 1)");
  if (hexBytes(f["public_key"], ED25519_KEY_BYTES) === undefined)
    return bad("`public_key` is not 64 lowercase hex digits");
  if (f["protection"] === "none") {
    return hexBytes(f["seed"], ED25519_KEY_BYTES) === undefined
      ? bad("`seed` is not 64 lowercase hex digits")
      : ok(v as PlainPrivateKeyFileV1);
  }
  if (f["protection"] !== "scrypt-aes-256-gcm") return bad("unknown `protection`");
  const kdf = (f["kdf"] ?? {}) as Record<string, unknown>;
  if (kdf["name"] !== "scrypt" || hexBytes(kdf["salt"], SALT_BYTES) === undefined)
    return bad("`kdf` is not scrypt with a 16-byte salt");
  if (!isInteger(kdf["log_n"]) || !isInteger(kdf["r"]) || !isInteger(kdf["p"])) {
    return bad("scrypt parameters `log_n`, `r` and `p` are not integers");
  }
  const refused = checkScryptParams({ log_n: kdf["log_n"], r: kdf["r"], p: kdf["p"] });
  if (refused !== undefined) return fail([refused]);
  if (
    hexBytes(f["iv"], IV_BYTES) === undefined ||
    hexBytes(f["tag"], TAG_BYTES) === undefined ||
    hexBytes(f["ciphertext"], ED25519_KEY_BYTES) === undefined
  ) {
    return bad("`iv`, `tag` or `ciphertext` is not lowercase hex of the right length");
  }
  return ok(v as EncryptedPrivateKeyFileV1);
}

/**
 * Recovers the seed of a parsed key file. An encrypted file needs the passphrase (`key_passphrase_required`
 * without one, `key_passphrase_wrong` when it does not open); the seed must give the recorded public key
 * (`key_mismatch`). Never throws, never echoes the passphrase.
 */
export function unwrapPrivateKey(file: PrivateKeyFileV1, passphrase: string | undefined): Result<Uint8Array> {
  let seed: Uint8Array | undefined;
  if (file.protection === "none") seed = hexBytes(file.seed, ED25519_KEY_BYTES);
  else {
    if (passphrase === undefined || passphrase.length === 0) {
      return fail([
        issue(
          { code: "key_passphrase_required" },
          "the private key is encrypted: set ACP_PASSPHRASE or run in a terminal to be asked",
        ),
      ]);
    }
    // a file built in memory rather than parsed meets the same bounds
    const refused = checkScryptParams(file.kdf);
    if (refused !== undefined) return fail([refused]);
    const salt = hexBytes(file.kdf.salt, SALT_BYTES) ?? new Uint8Array(SALT_BYTES);
    const sealed = {
      iv: hexBytes(file.iv) ?? new Uint8Array(),
      tag: hexBytes(file.tag) ?? new Uint8Array(),
      ciphertext: hexBytes(file.ciphertext) ?? new Uint8Array(),
    };
    seed = aesGcmOpen(kek(passphrase, salt, file.kdf), sealed, `acp private key ${file.public_key}`);
    if (seed === undefined)
      return fail([issue({ code: "key_passphrase_wrong" }, "wrong passphrase, or the private key file is corrupted")]);
  }
  if (seed === undefined || ed25519KeyPairFromSeed(seed).publicKeyHex !== file.public_key) {
    return fail([issue({ code: "key_mismatch" }, "the private key does not match the public key recorded with it")]);
  }
  return ok(seed);
}
