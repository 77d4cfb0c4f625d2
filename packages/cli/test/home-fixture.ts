import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ed25519KeyPairFromSeed, wrapPrivateKey, type Ed25519KeyPair } from "@acp/core";
import { configTemplate, createHome, STARTER_POLICY } from "@acp/store";

/** The passphrase of fixture homes. */
export const PASSPHRASE = "fixture passphrase";

/** A temporary directory for one test file; call `cleanup` in afterAll. */
export function tempRoot(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `acp-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

let n = 0;

/**
 * A home like `acp init` makes, but with the cheapest scrypt parameters acp accepts (N = 2^15) so tests stay fast; the CLI
 * reads the parameters from the key file. Returns the home and its key pair.
 */
export function fixtureHome(
  root: string,
  passphrase: string | null = PASSPHRASE,
): { home: string; key: Ed25519KeyPair } {
  const home = join(root, `home-${++n}`);
  const seed = randomBytes(32);
  const r = createHome(home, {
    privateKeyFile: wrapPrivateKey(seed, passphrase, randomBytes, { log_n: 15, r: 8, p: 1 }),
    configText: configTemplate(join(home, "policy.yml")),
    policyText: STARTER_POLICY,
    force: false,
    stamp: "t",
  });
  if (!r.ok) throw new Error(r.issues[0]?.message);
  return { home, key: ed25519KeyPairFromSeed(seed) };
}

/** The environment for a CLI run against a home. */
export function envFor(home: string, passphrase: string | null = PASSPHRASE): Record<string, string> {
  const env: Record<string, string> = { HOME: "/nonexistent-home", ACP_HOME: home };
  if (passphrase !== null) env["ACP_PASSPHRASE"] = passphrase;
  return env;
}

/**
 * Makes `home`'s config.yml choose the Telegram channel (`chat_id`, a stand-in Bot API at `apiRoot`) and
 * seals `token` into `telegram.bot_token` with `acp config set-secret`, as a person would.
 */
export async function configureTelegram(
  home: string,
  options: { readonly token: string; readonly chatId: number; readonly apiRoot: string },
): Promise<void> {
  writeFileSync(
    join(home, "config.yml"),
    `version: "1"\nchannel: telegram\ntelegram:\n  bot_token: ""\n  chat_id: "${options.chatId}"\n  api_root: "${options.apiRoot}"\n`,
  );
  const { runCli } = await import("./run.js");
  const sealed = await runCli(["config", "set-secret", "telegram.bot_token"], {
    env: envFor(home),
    stdin: `${options.token}\n`,
  });
  if (sealed.code !== 0) throw new Error(`acp config set-secret telegram.bot_token: ${sealed.stderr}`);
}
