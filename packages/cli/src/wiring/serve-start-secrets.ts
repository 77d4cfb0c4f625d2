/**
 * What `acp serve` opens at start from the home: its key pair (the passphrase is required), its bearer
 * tokens (environment first, else sealed in config.yml) and the vault's values it hides from the audit.
 */
import { existsSync } from "node:fs";
import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import { ed25519KeyPairFromSeed } from "@acp/core";
import type { ServiceKeyPair } from "@acp/server";
import { readConfigDocument, readConfigSecret, readPrivateKeyFile, readVault } from "@acp/store";
import { printError, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { openMasterSeed } from "../home-access/master-key.js";
import { canPrompt, PASSPHRASE_ENV } from "../home-access/secret-input.js";
import { checkBearerToken, webhookSecretProblem } from "./bearer-token.js";
import type { ServeConfig } from "./serve-config.js";

/**
 * Why `acp serve` (HTTP and `--stdio`) does not start without the passphrase where `acp proxy` starts and
 * refuses what would ask: the service hides the vault's values from the audit wherever a caller puts them
 * (a proxy hides only what it injects, and without the key it injects nothing), and it signs consent
 * answers and the home's audit checkpoints with the key. Started without it, it would write known secrets
 * unredacted and checkpoints the home's key does not verify.
 */
export const SERVE_NEEDS_THE_KEY =
  "acp serve needs it to hide the vault's values from the audit and to sign consent answers and audit " +
  "checkpoints, so unlike acp proxy it does not start without it";

/** The passphrase is missing and nothing can ask for it: what to do, for HTTP and for `--stdio`. */
function noPassphrase(stdio: boolean): CliError {
  const where = stdio
    ? `put ${PASSPHRASE_ENV} in the \`env\` of this command's entry in the MCP client's config (\`acp docs guides/serve\`)`
    : `set ${PASSPHRASE_ENV} in the service's environment (a systemd unit: Environment= or EnvironmentFile=), or start it in a terminal to be asked`;
  return new CliError(
    `the private key in $ACP_HOME/keys is encrypted and ${PASSPHRASE_ENV} is not set: ${where}; ${SERVE_NEEDS_THE_KEY} (key_passphrase_required)`,
    EXIT.error,
  );
}

/** The service's key pair: the home's (its passphrase required), or one that lives only as long as this process. */
export async function loadKeys(
  ctx: CliContext,
  home: string,
  stdio: boolean,
): Promise<{ keys: ServiceKeyPair; seed?: Uint8Array }> {
  if (existsSync(join(home, "keys", "private.key"))) {
    const file = readPrivateKeyFile(home);
    const given = (ctx.io.env[PASSPHRASE_ENV] ?? "") !== "";
    if (file.ok && file.value.protection !== "none" && !given && !canPrompt(ctx)) throw noPassphrase(stdio);
    const seed = await openMasterSeed(ctx, home);
    return { keys: ed25519KeyPairFromSeed(seed), seed };
  }
  printError(
    ctx,
    "acp serve: warning: no keys in $ACP_HOME (run `acp init`); consent responses are signed with a key that lives only as long as this process",
  );
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const publicKeyHex = Buffer.from(publicKey.export({ format: "jwk" }).x ?? "", "base64url").toString("hex");
  return { keys: { privateKey, publicKey, publicKeyHex, ephemeral: true } };
}

/** A scalar of config.yml as text (numbers too); undefined when absent or not a scalar. */
export function configValue(home: string, key: string): string | undefined {
  if (!existsSync(join(home, "config.yml"))) return undefined;
  const doc = readConfigDocument(home);
  const value: unknown = doc.ok ? doc.value.getIn(key.split(".")) : undefined;
  return typeof value === "string" || typeof value === "number" ? String(value) : undefined;
}

/** Where each of the two tokens comes from: the environment first, else a sealed secret in config.yml. */
export const TOKEN_SOURCES = {
  agents: { env: "ACP_BRIDGE_TOKEN", key: "bearer_token", sealed: (c: ServeConfig) => c.bearerToken },
  approvers: { env: "ACP_APPROVER_TOKEN", key: "approver_token", sealed: (c: ServeConfig) => c.approverToken },
} as const;

/**
 * The sealed secrets of a `serve.KEY.NAME` mapping, opened and each checked by `check` (it throws exit 4):
 * the tokens that name their agent (`serve.agent_tokens.NAME`) or approver (`serve.approver_tokens.NAME`),
 * checked like every bearer token, and the trusted-channel keys (`serve.trusted_channel_keys.KEY_ID`),
 * checked like every HMAC key. Tokens are distinct from each other and from the other two tokens (checked
 * by `acp serve` and by the service).
 */
export function loadNamedTokens(
  home: string,
  key: "agent_tokens" | "approver_tokens" | "trusted_channel_keys",
  named: Readonly<Record<string, string>> | undefined,
  seed: Uint8Array | undefined,
): Record<string, string> | undefined {
  if (named === undefined) return undefined;
  if (seed === undefined) {
    throw new CliError(
      `config.yml: serve.${key} needs the home's keys to open (run \`acp init\`, set ACP_PASSPHRASE)`,
      EXIT.invalid,
    );
  }
  const doc = readConfigDocument(home);
  if (!doc.ok) return undefined;
  const tokens: Record<string, string> = {};
  for (const name of Object.keys(named)) {
    const path = `serve.${key}.${name}`;
    const secret = readConfigSecret(doc.value, path, seed);
    if (!secret.ok)
      throw new CliError(`config.yml: ${path}: ${secret.issues[0]?.message ?? "unreadable"}`, EXIT.invalid);
    if (secret.value !== undefined) tokens[name] = checkNamedSecret(key, `config.yml: ${path}`, secret.value);
  }
  return tokens;
}

function checkNamedSecret(key: string, source: string, value: string): string {
  if (key !== "trusted_channel_keys") return checkBearerToken(source, value);
  const short = webhookSecretProblem(source, value);
  if (short !== null) throw new CliError(short, EXIT.invalid);
  return value;
}

/** The agents' or the approvers' token, checked like every bearer token (exit 4); undefined when unset. */
export function loadToken(
  ctx: CliContext,
  home: string,
  config: ServeConfig,
  seed: Uint8Array | undefined,
  whose: keyof typeof TOKEN_SOURCES,
): string | undefined {
  const source = TOKEN_SOURCES[whose];
  const fromEnv = ctx.io.env[source.env];
  if (fromEnv !== undefined && fromEnv !== "") return checkBearerToken(source.env, fromEnv);
  if (source.sealed(config) === undefined || seed === undefined) return undefined;
  const doc = readConfigDocument(home);
  if (!doc.ok) return undefined;
  const path = `serve.${source.key}`;
  const secret = readConfigSecret(doc.value, path, seed);
  if (!secret.ok) throw new CliError(`config.yml: ${path}: ${secret.issues[0]?.message ?? "unreadable"}`, EXIT.invalid);
  return secret.value === undefined ? undefined : checkBearerToken(`config.yml: ${path}`, secret.value);
}

/**
 * Every value in the vault, hidden from the audit log (SQLite file and PostgreSQL table) and from consent
 * requests wherever it appears, like the proxy hides the vault values it injects. Read once at start;
 * without keys there is no vault to read. An unreadable vault stops the start (exit 4) rather than
 * serving with known secrets unredacted.
 */
export function loadVaultSecrets(home: string, seed: Uint8Array | undefined): readonly string[] {
  if (seed === undefined) return [];
  const vault = readVault(home, seed);
  if (!vault.ok) {
    throw new CliError(
      `cannot read the vault to hide its values from the audit: ${vault.issues[0]?.message ?? "unreadable"}`,
      EXIT.invalid,
    );
  }
  return Object.values(vault.value).filter((v) => v !== "");
}
