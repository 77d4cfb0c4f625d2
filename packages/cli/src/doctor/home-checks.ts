import { formatIssue, parsePolicy, unwrapPrivateKey, DEFAULT_SCRYPT_PARAMS, MAX_POLICY_BYTES } from "@acp/core";
import { join } from "node:path";
import { readFileUpTo, readPrivateKeyFile, readPublicKeyHex, readVault, type HomeCheck } from "@acp/store";
import { describePolicyChoice, resolvePolicyPath, type PathIo, type PolicyChoice } from "../wiring/policy-path.js";
import { CliError } from "../exit-codes.js";
import type { ConfigFile } from "../wiring/config-file.js";

/** Config keys that must hold sealed values when set. */
export const SECRET_CONFIG_PATHS = [
  "telegram.bot_token",
  "webhook.secret",
  "serve.bearer_token",
  "serve.approver_token",
  "proxy.bearer_token",
] as const;

/** Key presence and, when a passphrase is at hand, decryptability; returns the seed when it opened. */
export function checkKeys(home: string, passphrase: string | undefined): { checks: HomeCheck[]; seed?: Uint8Array } {
  const pub = readPublicKeyHex(home);
  const file = readPrivateKeyFile(home);
  const checks: HomeCheck[] = [];
  checks.push(
    pub.ok
      ? { status: "ok", name: "public key", detail: pub.value }
      : {
          status: "fail",
          name: "public key",
          detail: formatIssue(pub.issues[0] ?? { code: "", path: [], message: "invalid" }),
        },
  );
  if (!file.ok) {
    checks.push({ status: "fail", name: "private key", detail: file.issues[0]?.message ?? "invalid" });
    return { checks };
  }
  const key = file.value;
  if (pub.ok && pub.value !== key.public_key) {
    checks.push({ status: "fail", name: "private key", detail: "keys/public.key and keys/private.key are not a pair" });
    return { checks };
  }
  if (key.protection === "none") {
    checks.push({
      status: "warn",
      name: "private key",
      detail: "stored UNENCRYPTED (--no-passphrase); re-run `acp init --force` with a passphrase",
    });
  } else if (key.kdf.log_n < DEFAULT_SCRYPT_PARAMS.log_n) {
    // below the floor the file does not parse (key_kdf_too_weak, a fail above); between it and the default, a warning
    checks.push({
      status: "warn",
      name: "private key",
      detail: `weak scrypt parameters (N = 2^${key.kdf.log_n}, r = ${key.kdf.r}, p = ${key.kdf.p}; acp writes N = 2^${DEFAULT_SCRYPT_PARAMS.log_n}): make a new key with \`acp init --force\` when you can`,
    });
  }
  if (key.protection !== "none" && passphrase === undefined) {
    checks.push({
      status: "warn",
      name: "private key",
      detail: "encrypted; not opened (set ACP_PASSPHRASE to check the passphrase)",
    });
    return { checks };
  }
  const seed = unwrapPrivateKey(key, passphrase);
  if (!seed.ok) {
    checks.push({ status: "fail", name: "private key", detail: seed.issues[0]?.message ?? "does not open" });
    return { checks };
  }
  if (key.protection !== "none")
    checks.push({ status: "ok", name: "private key", detail: "encrypted; opens with the passphrase" });
  return { checks, seed: seed.value };
}

/** The vault opens with the key (when the key opened). The config file: `checkConfigInUse` (config-checks.ts). */
export function checkVault(home: string, seed: Uint8Array | undefined): HomeCheck[] {
  if (seed === undefined) return [];
  const vault = readVault(home, seed);
  return [
    vault.ok
      ? { status: "ok", name: "vault", detail: `${Object.keys(vault.value).length} entries` }
      : { status: "fail", name: "vault", detail: vault.issues[0]?.message ?? "invalid" },
  ];
}

/**
 * The policy file in use validates: `defaults.policy` of the config file `config` when set (a missing or
 * unreadable file it names fails), else the home's policy.yml; the detail says which file and why. Read as the
 * home's other files are: a regular file only, at most {@link MAX_POLICY_BYTES} (a policy.yml made a link to
 * `/dev/zero` or a named pipe stopped doctor).
 */
export function checkPolicy(
  home: string,
  config: ConfigFile | CliError | string = join(home, "config.yml"),
  io: PathIo = { env: process.env, cwd: process.cwd() },
): HomeCheck {
  if (config instanceof CliError) {
    const detail = `cannot tell which policy file is in use: the config file cannot be read (${config.message})`;
    return { status: "fail", name: "policy", detail };
  }
  let choice: PolicyChoice;
  try {
    choice = resolvePolicyPath(io, home, undefined, config);
  } catch (err) {
    return { status: "fail", name: "policy", detail: err instanceof Error ? err.message : String(err) };
  }
  const shown = choice.source === "home" ? "policy.yml" : choice.path;
  const from = describePolicyChoice(choice);
  let text: string;
  try {
    const bytes = readFileUpTo(choice.path, MAX_POLICY_BYTES, { regularOnly: true });
    if (bytes === undefined)
      return {
        status: "fail",
        name: "policy",
        detail: `${shown} is larger than ${MAX_POLICY_BYTES / 1024 / 1024} MiB (${from})`,
      };
    text = bytes.toString("utf8");
  } catch (err) {
    const detail = (err as NodeJS.ErrnoException).code === undefined ? `: ${(err as Error).message}` : "";
    return { status: "fail", name: "policy", detail: `${shown} is missing or unreadable${detail}` };
  }
  const r = parsePolicy(text);
  if (r.ok)
    return {
      status: "ok",
      name: "policy",
      detail: `${r.value.rules.length} rules, default ${r.value.default_action}: ${from}`,
    };
  return {
    status: "fail",
    name: "policy",
    detail: `${formatIssue(r.issues[0] ?? { code: "", path: [], message: "invalid" }, shown)} (${r.issues.length} issues; run \`acp policy validate\`)`,
  };
}
