import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp policy verify` (being built: it says so and exits 1). */
export function registerPolicyVerify(parent: Command, _ctx: CliContext): void {
  parent
    .command("verify")
    .description("check the policy and intent exhaustively for bounded sessions (not yet built)")
    .allowUnknownOption()
    .action(() => {
      throw new CliError("`acp policy verify` is not built yet", EXIT.error);
    });
}
