import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp audit verify` (not implemented yet). */
export function registerAuditVerify(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("verify")
    .description("verify the audit chain and its checkpoints (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp audit verify` is not implemented yet", EXIT.error);
    });
}
