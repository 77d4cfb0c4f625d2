import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp vault rm` (not implemented yet). */
export function registerVaultRm(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("rm")
    .description("remove a secret (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp vault rm` is not implemented yet", EXIT.error);
    });
}
