import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp config set-secret` (not implemented yet). */
export function registerConfigSetSecret(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("set-secret")
    .description("seal a secret into config.yml (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp config set-secret` is not implemented yet", EXIT.error);
    });
}
