import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import { generateEd25519Seed, wrapPrivateKey } from "@acp/core";
import {
  configTemplate,
  createHome,
  homeInUseMessage,
  isExistingHome,
  liveHomeWriters,
  STARTER_POLICY,
} from "@acp/store";
import { printError, printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { orThrow } from "../home-access/or-throw.js";
import { canPrompt, PASSPHRASE_ENV, resolvePassphrase } from "../home-access/secret-input.js";

interface InitOptions {
  readonly force?: boolean;
  /** commander sets `passphrase: false` for `--no-passphrase`. */
  readonly passphrase: boolean;
  readonly json?: boolean;
}

const NO_PASSPHRASE_WARNING = [
  "WARNING: --no-passphrase stores the private key UNENCRYPTED in keys/private.key.",
  "WARNING: anyone who can read that file can sign consent approvals and open the vault.",
  "WARNING: use it only for throwaway homes; re-run `acp init --force` with a passphrase for real use.",
];

/** A new key's passphrase shorter than this is kept with a warning (the vault's short-value length too). */
const SHORT_PASSPHRASE = 12;

/**
 * Refuses a blank passphrase (it protects nothing) and warns of a short one: a copied keys/private.key is
 * guessed offline. Names the length, never the passphrase.
 */
function checkNewPassphrase(ctx: CliContext, passphrase: string): void {
  if (passphrase.trim() === "")
    throw new CliError(
      `the passphrase must not be blank (only spaces): choose one of ${SHORT_PASSPHRASE} characters or more`,
      EXIT.usage,
    );
  const length = [...passphrase].length;
  if (length < SHORT_PASSPHRASE)
    printError(
      ctx,
      `warning: the passphrase is ${length} character${length === 1 ? "" : "s"} long: a short one is guessed offline from a copied keys/private.key; ${SHORT_PASSPHRASE} characters or more is safer (re-run \`acp init --force\`)`,
    );
}

async function runInit(ctx: CliContext, options: InitOptions): Promise<void> {
  const home = resolveHome(ctx.io);
  if (options.force !== true && isExistingHome(home)) {
    throw new CliError(`\`${home}\` already holds an acp home (use --force to replace its config, policy and keys)`);
  }
  // before the passphrase is asked for: createHome checks again before it writes (home_in_use)
  const writers = liveHomeWriters(home);
  if (writers.length > 0) throw new CliError(`${homeInUseMessage(home, writers)} (home_in_use)`);
  const encrypted = options.passphrase;
  if (!encrypted) for (const line of NO_PASSPHRASE_WARNING) printError(ctx, line);
  const fromEnv = ctx.io.env[PASSPHRASE_ENV];
  // off a terminal (CI, a script) the home's own choice is named too: a throwaway home needs no passphrase
  if (encrypted && (fromEnv === undefined || fromEnv === "") && !canPrompt(ctx))
    throw new CliError(
      `no passphrase for the new key: set ${PASSPHRASE_ENV}, run in a terminal to be asked, or for a throwaway home \`acp init --no-passphrase\` (key_passphrase_required)`,
      EXIT.error,
    );
  const passphrase = encrypted ? await resolvePassphrase(ctx, true) : null;
  if (passphrase !== null) checkNewPassphrase(ctx, passphrase);
  const seed = generateEd25519Seed(randomBytes);
  const privateKeyFile = wrapPrivateKey(seed, passphrase, randomBytes);
  seed.fill(0);
  const created = orThrow(
    createHome(home, {
      privateKeyFile,
      // relative: read from the home, so a home copied elsewhere stays whole
      configText: configTemplate("policy.yml"),
      policyText: STARTER_POLICY,
      force: options.force === true,
      stamp: ctx.io.now().toISOString().replace(/[:.]/g, "-"),
    }),
  );
  const p = created.paths;
  const files = [p.config, p.policy, p.privateKey, p.publicKey];
  // on stderr with --json too: the log a person may look for is no longer where it was
  if (created.auditMovedTo !== undefined) {
    printError(
      ctx,
      `warning: the old audit log was signed with another key (an acp proxy run before acp init, or the home's old key), which the new key cannot verify; moved it and its anchor to ${created.auditMovedTo} (the next audited command starts a new audit.jsonl)`,
    );
  }
  if (options.json === true) {
    printJson(ctx, {
      home,
      public_key: privateKeyFile.public_key,
      private_key_encrypted: encrypted,
      files,
      replaced: created.replaced,
      vault_moved_to: created.vaultMovedTo ?? null,
      audit_moved_to: created.auditMovedTo ?? null,
    });
    return;
  }
  printLine(ctx, `created ${home} (mode 0700)`);
  for (const f of files) printLine(ctx, `  ${f}`);
  printLine(ctx, `public key: ${privateKeyFile.public_key}`);
  printLine(
    ctx,
    encrypted ? "private key: encrypted with your passphrase (scrypt, aes-256-gcm)" : "private key: UNENCRYPTED",
  );
  if (created.vaultMovedTo !== undefined) {
    printError(ctx, `warning: the old vault was sealed with the old key; moved to ${created.vaultMovedTo}`);
  }
  printLine(ctx, "next: review policy.yml, then `acp doctor`");
  // the step a new user misses: a proxy an MCP client starts has no terminal to ask the passphrase at
  printLine(
    ctx,
    encrypted
      ? "then: `acp proxy --upstream '…'` as the server's command in your MCP client, with ACP_PASSPHRASE in its env (`acp docs guides/proxy`)"
      : "then: `acp proxy --upstream '…'` as the server's command in your MCP client (`acp docs guides/proxy`)",
  );
}

/** Registers `acp init`. */
export function registerInit(parent: Command, ctx: CliContext): void {
  parent
    .command("init")
    .description(
      "create $ACP_HOME (default ~/.acp, mode 0700) with a commented config.yml, a safe starter policy.yml, " +
        "and an Ed25519 key pair whose private key is encrypted with your passphrase",
    )
    .option(
      "--force",
      "replace the config, policy and keys of an existing home (an old vault and audit log are moved aside)",
    )
    .option("--no-passphrase", "store the private key unencrypted (loud warning; for throwaway homes only)")
    .option("--json", "print what was created as JSON")
    .addHelpText(
      "after",
      `
The passphrase comes from ACP_PASSPHRASE, or is asked twice without echo when stdin is a terminal.
With neither, init stops with an error rather than store the key unencrypted. A blank passphrase (only
spaces) is refused; one shorter than 12 characters is kept with a warning on stderr.

config.yml holds the settings of acp proxy (channel, proxy, session, …; its other keys commented out with
their defaults) and, commented out the same way, the serve: and storage: sections of acp serve and the
sandbox: section of acp run: remove the first "# " of each line to use one.

An audit.jsonl already there whose checkpoints the new key cannot verify (one an acp proxy run before
acp init signed with a key thrown away at exit, or the old key's with --force) is moved aside with its
anchor to audit.jsonl.before-init-<time>, never deleted, with a warning; state.db and pins.json stay.

While an acp proxy, acp run or acp serve writes the home's audit log, init changes nothing and stops
(home_in_use), naming the process: the writer would go on signing with the old key in a log moved from
under it. Stop it, then run init again. A writer that was killed does not count.

Examples:
  acp init                                  # asks for a passphrase
  ACP_PASSPHRASE=… acp init --json          # scripted
  ACP_HOME="$(mktemp -d)/acp" acp init --no-passphrase   # a throwaway home
  acp init --force                          # new keys, fresh config and policy

Exit codes: 0 created, 1 error (home exists without --force, home in use, no passphrase, I/O), 2 usage
(an empty or blank passphrase, two that differ at the prompt, an unknown option).`,
    )
    .action(async (options: InitOptions) => {
      await runInit(ctx, options);
    });
}
