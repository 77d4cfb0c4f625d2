import { readFileSync } from "node:fs";
import { formatIssue, parsePolicy, unwrapPrivateKey, DEFAULT_SCRYPT_PARAMS, isSealedSecret } from "@acp/core";
import {
  homePaths,
  readConfigDocument,
  readPrivateKeyFile,
  readPublicKeyHex,
  readVault,
  type HomeCheck,
} from "@acp/store";
import { loadSessionSettings } from "../wiring/session-config.js";

/** Config keys that must hold sealed values when set. */
export const SECRET_CONFIG_PATHS = ["telegram.bot_token", "webhook.secret"] as const;

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
    checks.push({
      status: "warn",
      name: "private key",
      detail: `weak scrypt parameters (N = 2^${key.kdf.log_n}, want 2^${DEFAULT_SCRYPT_PARAMS.log_n})`,
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

/** The vault opens with the key (when the key opened) and the config holds no plain secrets. */
export function checkVaultAndConfig(home: string, seed: Uint8Array | undefined): HomeCheck[] {
  const checks: HomeCheck[] = [];
  if (seed !== undefined) {
    const vault = readVault(home, seed);
    checks.push(
      vault.ok
        ? { status: "ok", name: "vault", detail: `${Object.keys(vault.value).length} entries` }
        : { status: "fail", name: "vault", detail: vault.issues[0]?.message ?? "invalid" },
    );
  }
  const doc = readConfigDocument(home);
  if (!doc.ok) {
    checks.push({ status: "fail", name: "config", detail: doc.issues[0]?.message ?? "invalid" });
    return checks;
  }
  const plain = SECRET_CONFIG_PATHS.filter((p) => {
    const v: unknown = doc.value.getIn(p.split("."));
    return typeof v === "string" && v !== "" && !isSealedSecret(v);
  });
  checks.push(
    plain.length === 0
      ? { status: "ok", name: "config", detail: "parses; no plain secrets" }
      : {
          status: "fail",
          name: "config",
          detail: `plain secret in ${plain.map((p) => `\`${p}\``).join(", ")} (seal it with \`acp config set-secret\`)`,
        },
  );
  return checks;
}

/** config.yml's `session:` block (the session runtime of `acp proxy`) parses, and what it turns on. */
export function checkSessionSettings(home: string): HomeCheck {
  let given: Record<string, unknown>;
  try {
    given = loadSessionSettings(home);
  } catch (err) {
    const detail = err instanceof Error ? err.message.replace(/^[^:]*config\.yml: /, "") : String(err);
    return { status: "fail", name: "session", detail: detail.replace(/\n\s*/g, " ") };
  }
  if (Object.keys(given).length === 0)
    return { status: "ok", name: "session", detail: "no `session:` block: the runtime's defaults" };
  const reads = given["reads"] as Record<string, unknown> | undefined;
  const on = [
    given["escalate_after_instructions"] === true ? "changes ask after injected text" : null,
    reads?.["after_instructions"] === "ask" ? "reads ask after injected text" : null,
  ].filter((x) => x !== null);
  return { status: "ok", name: "session", detail: on.length > 0 ? on.join("; ") : "parses" };
}

/** The home's policy.yml validates. */
export function checkPolicy(home: string): HomeCheck {
  let text: string;
  try {
    text = readFileSync(homePaths(home).policy, "utf8");
  } catch {
    return { status: "fail", name: "policy", detail: "policy.yml is missing or unreadable" };
  }
  const r = parsePolicy(text);
  if (r.ok)
    return { status: "ok", name: "policy", detail: `${r.value.rules.length} rules, default ${r.value.default_action}` };
  return {
    status: "fail",
    name: "policy",
    detail: `${formatIssue(r.issues[0] ?? { code: "", path: [], message: "invalid" }, "policy.yml")} (${r.issues.length} issues; run \`acp policy validate\`)`,
  };
}
