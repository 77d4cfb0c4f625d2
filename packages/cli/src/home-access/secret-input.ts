import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Environment variable holding the passphrase of the private key. */
export const PASSPHRASE_ENV = "ACP_PASSPHRASE";

async function ask(ctx: CliContext, question: string): Promise<string> {
  const prompt = ctx.io.promptHidden;
  if (prompt === undefined) throw new CliError("no terminal to ask on", EXIT.error);
  try {
    return await prompt(question);
  } catch {
    throw new CliError("aborted", EXIT.error);
  }
}

/** Whether a hidden prompt can be shown (stdin is a terminal and the front end can prompt). */
export function canPrompt(ctx: CliContext): boolean {
  return ctx.io.stdinIsTTY && ctx.io.promptHidden !== undefined;
}

/**
 * The passphrase of the private key: `ACP_PASSPHRASE`, else a hidden prompt when stdin is a terminal
 * (asked twice when `confirm`), else an error that says how to give one. Never echoed, never logged.
 */
export async function resolvePassphrase(ctx: CliContext, confirm: boolean): Promise<string> {
  const fromEnv = ctx.io.env[PASSPHRASE_ENV];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  if (!canPrompt(ctx)) {
    throw new CliError(
      `no passphrase: set ${PASSPHRASE_ENV} or run in a terminal to be asked (key_passphrase_required)`,
      EXIT.error,
    );
  }
  const first = await ask(ctx, "passphrase for the acp private key: ");
  if (first.length === 0) throw new CliError("the passphrase must not be empty", EXIT.usage);
  if (confirm && (await ask(ctx, "same passphrase again: ")) !== first) {
    throw new CliError("the two passphrases differ", EXIT.usage);
  }
  return first;
}

/**
 * A secret value for `what`: a hidden prompt when stdin is a terminal, otherwise all of stdin with one
 * trailing newline removed. Never from the command line. Empty is refused.
 */
export async function readSecretValue(ctx: CliContext, what: string): Promise<string> {
  let value: string;
  if (canPrompt(ctx)) value = await ask(ctx, `value for ${what} (not shown): `);
  else value = (await ctx.io.readStdin()).replace(/\r?\n$/, "");
  if (value.length === 0) {
    throw new CliError(
      `no value for ${what}: give it on stdin (\`printf %s "$VALUE" | acp …\`) or in a terminal`,
      EXIT.usage,
    );
  }
  return value;
}
