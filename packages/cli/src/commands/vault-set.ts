import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import { isVaultName } from "@acp/core";
import { readVault, writeVault } from "@acp/store";
import { printError, printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { openMasterSeed } from "../home-access/master-key.js";
import { orThrow } from "../home-access/or-throw.js";
import { readSecretValue } from "../home-access/secret-input.js";

/**
 * Values shorter than this are stored with a warning: redaction shows which text it hid, so an agent that
 * has any tool echo many guesses in one call learns a short or common value from the one hidden.
 */
export const SHORT_VAULT_VALUE = 12;

/** The warning for a value shorter than {@link SHORT_VAULT_VALUE}, or `undefined`. Names the entry and the length, never the value. */
export function shortValueWarning(name: string, value: string): string | undefined {
  const length = [...value].length;
  if (length >= SHORT_VAULT_VALUE) return undefined;
  return (
    `warning: \`${name}\` is ${length} character${length === 1 ? "" : "s"} long: an agent can guess a short value ` +
    "through the proxy (it hides the value wherever a tool's answer holds it, so a tool that echoes many guesses " +
    `shows which one is hidden); use a random value of ${SHORT_VAULT_VALUE}+ characters where the service allows`
  );
}

/** Refuses an invalid vault entry name (exit 2). */
export function assertVaultName(name: string): void {
  if (!isVaultName(name)) {
    throw new CliError(
      `invalid vault name \`${name.slice(0, 64)}\` (a letter or _, then letters, digits, _, . or -; at most 128)`,
      EXIT.usage,
    );
  }
}

/** Registers `acp vault set`. */
export function registerVaultSet(parent: Command, ctx: CliContext): void {
  parent
    .command("set")
    .description("store a secret in the encrypted vault; the value comes from stdin or a hidden prompt, never argv")
    .argument("<name>", "the entry name, e.g. GITHUB_TOKEN")
    .argument("[extra...]", "refused: a value on the command line would land in shell history and `ps`")
    .option("--json", "print the outcome as JSON")
    .addHelpText(
      "after",
      `
The value is read from stdin (one trailing newline removed) or, in a terminal, asked without echo.
The vault is re-sealed (AES-256-GCM, fresh IV) and replaced atomically. Needs the key's passphrase
(ACP_PASSPHRASE or a prompt).

Examples:
  printf %s "$GITHUB_TOKEN" | acp vault set GITHUB_TOKEN
  acp vault set SMTP_PASSWORD             # asks for the value without echo

A value shorter than ${SHORT_VAULT_VALUE} characters is stored with a warning on stderr: the proxy hides a
vault value wherever an answer holds it, so an agent can learn a short one by having a tool echo guesses.

Exit codes: 0 stored, 1 error (no passphrase, corrupted vault), 2 usage (bad name, value in argv).`,
    )
    .action(async (name: string, extra: string[], options: { json?: boolean }) => {
      if (extra.length > 0) {
        throw new CliError(
          "`acp vault set` takes no value on the command line: pipe it on stdin or type it at the prompt",
          EXIT.usage,
        );
      }
      assertVaultName(name);
      const home = resolveHome(ctx.io);
      const seed = await openMasterSeed(ctx, home);
      try {
        const entries = orThrow(readVault(home, seed));
        const value = await readSecretValue(ctx, `\`${name}\``);
        const short = shortValueWarning(name, value);
        const replaced = Object.hasOwn(entries, name);
        const next = { ...entries, [name]: value };
        orThrow(writeVault(home, next, seed, randomBytes));
        const count = Object.keys(next).length;
        if (short !== undefined) printError(ctx, short);
        if (options.json === true) printJson(ctx, { name, replaced, entries: count });
        else
          printLine(
            ctx,
            `${replaced ? "replaced" : "stored"} \`${name}\` in the vault (${count} ${count === 1 ? "entry" : "entries"})`,
          );
      } finally {
        seed.fill(0);
      }
    });
}
