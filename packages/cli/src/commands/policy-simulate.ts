import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp policy simulate` (not implemented yet). */
export function registerPolicySimulate(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("simulate")
    .description("run one request through the pipeline and print the decision as JSON (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp policy simulate` is not implemented yet", EXIT.error);
    });
}
