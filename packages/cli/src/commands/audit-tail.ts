import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp audit tail` (not implemented yet). */
export function registerAuditTail(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("tail")
    .description("print audit events readably (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp audit tail` is not implemented yet", EXIT.error);
    });
}
