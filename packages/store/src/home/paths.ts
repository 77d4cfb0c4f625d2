import { join } from "node:path";

/** Every file of `$ACP_HOME` (default `~/.acp`, mode 0700). */
export interface HomePaths {
  readonly home: string;
  /** `config.yml`, mode 0600 (holds sealed secrets). */
  readonly config: string;
  /** `policy.yml`, mode 0600. */
  readonly policy: string;
  /** `keys/`, mode 0700. */
  readonly keysDir: string;
  /** `keys/private.key`, mode 0600, encrypted with the passphrase. */
  readonly privateKey: string;
  /** `keys/public.key`: the raw Ed25519 public key, 64 lowercase hex digits and a newline. */
  readonly publicKey: string;
  /** `vault.json`, mode 0600 (§2.3). */
  readonly vault: string;
  readonly audit: string;
  readonly stateDb: string;
  readonly consentGraph: string;
  /** `memory.key`, mode 0600: the key of the session runtime's provenance memory in `state.db`. */
  readonly memoryKey: string;
}

/** The paths of a home directory. */
export function homePaths(home: string): HomePaths {
  const keysDir = join(home, "keys");
  return {
    home,
    config: join(home, "config.yml"),
    policy: join(home, "policy.yml"),
    keysDir,
    privateKey: join(keysDir, "private.key"),
    publicKey: join(keysDir, "public.key"),
    vault: join(home, "vault.json"),
    audit: join(home, "audit.jsonl"),
    stateDb: join(home, "state.db"),
    consentGraph: join(home, "consent-graph.json"),
    memoryKey: join(home, "memory.key"),
  };
}

/** Mode of the home and `keys/` directories. */
export const HOME_DIR_MODE = 0o700;
/** Mode of every file ACP writes in the home. */
export const HOME_FILE_MODE = 0o600;
