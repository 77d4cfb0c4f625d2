import { randomBytes } from "node:crypto";
import type { Command } from "commander";
import { readVault, writeVault } from "@acp/store";
import { printJson, printLine, resolveHome, type CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { openMasterSeed } from "../home-access/master-key.js";
import { orThrow } from "../home-access/or-throw.js";
import { assertVaultName } from "./vault-set.js";

/** Registers `acp vault rm`. */
export function registerVaultRm(parent: Command, ctx: CliContext): void {
  parent
    .command("rm")
    .description("remove a secret from the vault")
    .argument("<name>", "the entry name")
    .option("--json", "print the outcome as JSON")
    .addHelpText(
      "after",
      `
The vault is re-sealed without the entry (fresh IV) and replaced atomically.

Examples:
  acp vault rm GITHUB_TOKEN

Exit codes: 0 removed, 1 error (no passphrase, corrupted vault), 2 usage, 4 no such entry (an unknown
name, as an unknown id is for acp approve).`,
    )
    .action(async (name: string, options: { json?: boolean }) => {
      assertVaultName(name);
      const home = resolveHome(ctx.io);
      const seed = await openMasterSeed(ctx, home);
      try {
        const entries = orThrow(readVault(home, seed));
        if (!Object.hasOwn(entries, name))
          throw new CliError(`the vault has no entry \`${name}\` (see \`acp vault list\`)`, EXIT.invalid);
        const next = Object.fromEntries(Object.entries(entries).filter(([k]) => k !== name));
        orThrow(writeVault(home, next, seed, randomBytes));
        const count = Object.keys(next).length;
        if (options.json === true) printJson(ctx, { name, removed: true, entries: count });
        else printLine(ctx, `removed \`${name}\` from the vault (${count} ${count === 1 ? "entry" : "entries"} left)`);
      } finally {
        seed.fill(0);
      }
    });
}
