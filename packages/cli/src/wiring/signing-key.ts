import { randomBytes } from "node:crypto";
import { ed25519KeyPairFromSeed, generateEd25519Seed, type Ed25519KeyPair } from "@acp/core";
import { loadMasterSeed, readPrivateKeyFile } from "@acp/store";
import type { CliIo } from "../context.js";
import { PASSPHRASE_ENV } from "../home-access/secret-input.js";

/** The key a long-running command signs with: the home's, or an ephemeral one without a home. */
export interface SigningKey {
  /** Loads (once) and returns the key pair; rejects with a message a person can act on. */
  get(): Promise<Ed25519KeyPair>;
  /** The home's master seed (keys the vault); rejects without a home. */
  seed(): Promise<Uint8Array>;
  readonly ephemeral: boolean;
}

/** Who opens the key: `acp proxy`, `acp run` or the in-process guard (`openGuard`). */
export type KeyHolder = "proxy" | "run" | "guard";

/** Where each holder's passphrase is set: none of them can ask for it. */
const SET_IT: Readonly<Record<KeyHolder, string>> = {
  // stdin carries MCP
  proxy: "set it in the proxy's environment, e.g. the `env` of its entry in the MCP client's config",
  // stdin and the terminal are the agent's
  run: "set it in the environment `acp run` is started in",
  // a library: there is no terminal of its own
  guard: "pass `passphrase` to openGuard, or set it in the environment of the program that opens the guard",
};

/**
 * The home's Ed25519 key, unlocked with `ACP_PASSPHRASE` or, when the key is not encrypted, without one.
 * None of its holders can prompt (a proxy's stdin carries MCP, `acp run`'s terminal is the agent's, the
 * guard is a library), so a missing passphrase is an error naming the fix for `holder`.
 */
export function homeSigningKey(
  io: CliIo,
  home: string | null,
  log: (line: string) => void,
  holder: KeyHolder = "proxy",
): SigningKey {
  let loaded: Promise<Ed25519KeyPair> | undefined;
  if (home === null) {
    const pair = ed25519KeyPairFromSeed(generateEd25519Seed((n) => randomBytes(n)));
    log(
      `no ACP home: approvals are signed with an ephemeral key ${pair.publicKeyHex.slice(0, 16)}… (run \`acp init\`)`,
    );
    return {
      get: () => Promise.resolve(pair),
      seed: () => Promise.reject(new Error("no ACP home: there is no vault (run `acp init`)")),
      ephemeral: true,
    };
  }
  let seeded: Promise<Uint8Array> | undefined;
  const loadSeed = (): Uint8Array => {
    const file = readPrivateKeyFile(home);
    if (!file.ok) throw new Error(file.issues[0]?.message ?? "cannot read keys/private.key");
    const passphrase = io.env[PASSPHRASE_ENV];
    const seed = loadMasterSeed(home, passphrase === "" ? undefined : passphrase);
    if (!seed.ok) {
      const first = seed.issues[0];
      // the key file's own advice ("or run in a terminal to be asked") does not hold here: nothing can ask
      // for a passphrase. What the key was for (approvals, audit checkpoints) is the caller's to say
      if (first?.code === "key_passphrase_required") {
        throw new Error(`the private key is encrypted and ${PASSPHRASE_ENV} is not set (${SET_IT[holder]})`);
      }
      const why = first?.message ?? "cannot open keys/private.key";
      // only a key the passphrase does not open is about the passphrase: a key file others can read, weak scrypt
      // settings or a public key that is not its pair carry their own fix
      if (first?.code !== "key_passphrase_wrong") throw new Error(why);
      throw new Error(
        `${why} (${PASSPHRASE_ENV} is set but does not open it: check the passphrase, or whether keys/private.key is corrupted)`,
      );
    }
    return seed.value;
  };
  const seedOnce = (): Promise<Uint8Array> => (seeded ??= Promise.resolve().then(loadSeed));
  return {
    get: () => (loaded ??= seedOnce().then((seed) => ed25519KeyPairFromSeed(seed))),
    seed: seedOnce,
    ephemeral: false,
  };
}
