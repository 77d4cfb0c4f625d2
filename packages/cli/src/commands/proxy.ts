import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { CliError, EXIT } from "../exit-codes.js";

/** Registers `acp proxy` (not implemented yet). */
export function registerProxy(parent: Command, ctx: CliContext): void {
  void ctx;
  parent
    .command("proxy")
    .description("run the MCP proxy in front of one or more upstream MCP servers (not implemented yet)")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(() => {
      throw new CliError("`acp proxy` is not implemented yet", EXIT.error);
    });
}
