import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp vault list` (not implemented yet). */
export function registerVaultList(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("list")
    .description("list secret names (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp vault list` is not implemented yet", EXIT.error);
    });
}
