import type { Command } from "commander";
import { readVault } from "@acp/store";
import { printError, printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { openMasterSeed } from "../home-access/master-key.js";
import { orThrow } from "../home-access/or-throw.js";

/** Registers `acp vault list`. */
export function registerVaultList(parent: Command, ctx: CliContext): void {
  parent
    .command("list")
    .description("list the names in the vault (never the values)")
    .option("--json", "print the names as JSON")
    .addHelpText(
      "after",
      `
Names are inside the encrypted data, so listing needs the key's passphrase (ACP_PASSPHRASE or a prompt).

Examples:
  acp vault list
  acp vault list --json

An empty vault prints nothing on stdout and says so on stderr (with --json: {"names": []}).

Exit codes: 0 listed (also when empty), 1 error (no passphrase, corrupted vault), 2 usage.`,
    )
    .action(async (options: { json?: boolean }) => {
      const home = resolveHome(ctx.io);
      const seed = await openMasterSeed(ctx, home);
      const names = Object.keys(orThrow(readVault(home, seed))).sort();
      seed.fill(0);
      if (options.json === true) printJson(ctx, { names });
      else if (names.length === 0)
        // on stderr: stdout stays one name a line (none here) for a script
        printError(ctx, 'the vault is empty: add a credential with `printf %s "$TOKEN" | acp vault set NAME`');
      else for (const name of names) printLine(ctx, name);
    });
}
