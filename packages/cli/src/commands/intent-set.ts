import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp intent set` (being built: it says so and exits 1). */
export function registerIntentSet(parent: Command, _ctx: CliContext): void {
  parent
    .command("set")
    .description("change a live session's intent (not yet built)")
    .allowUnknownOption()
    .action(() => {
      throw new CliError("`acp intent set` is not built yet", EXIT.error);
    });
}
