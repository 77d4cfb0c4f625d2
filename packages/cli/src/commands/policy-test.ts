import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp policy test` (not implemented yet). */
export function registerPolicyTest(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("test")
    .description("run YAML decision test cases (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp policy test` is not implemented yet", EXIT.error);
    });
}
