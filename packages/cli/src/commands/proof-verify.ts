import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp proof verify` (not implemented yet). */
export function registerProofVerify(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("verify")
    .description("verify a signed consent response (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp proof verify` is not implemented yet", EXIT.error);
    });
}
