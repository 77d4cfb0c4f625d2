import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp check` (not implemented yet). */
export function registerCheck(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("check")
    .description("an Agent Action Contract v1 event in, the decision envelope out (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp check` is not implemented yet", EXIT.error);
    });
}
