import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp vault set` (not implemented yet). */
export function registerVaultSet(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("set")
    .description("store a secret (value from stdin or a hidden prompt) (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp vault set` is not implemented yet", EXIT.error);
    });
}
