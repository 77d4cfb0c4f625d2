import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp doctor` (not implemented yet). */
export function registerDoctor(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("doctor")
    .description("report on the home: permissions, keys, policy, isolation (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp doctor` is not implemented yet", EXIT.error);
    });
}
