import type { Command } from "commander";
import { suggest } from "@acp/core";
import { CliError, EXIT } from "./exit-codes.js";

/** The subcommand of `cmd` named `name` (or aliased so). */
function findCommand(cmd: Command, name: string): Command | undefined {
  return cmd.commands.find((sub) => sub.name() === name || sub.aliases().includes(name));
}

/**
 * Refuses `acp [COMMAND…] help NAME…` when a NAME is not a command there (exit 2, `unknown command \`NAME\``,
 * with the closest command when one is near): commander printed the whole help on stderr without saying why.
 * Anything else is left to commander.
 */
export function assertHelpTarget(program: Command, argv: readonly string[]): void {
  let cmd = program;
  const path: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (token === "help" && cmd.commands.length > 0 && findCommand(cmd, token) === undefined) break;
    const sub = findCommand(cmd, token);
    if (sub === undefined) return;
    path.push(token);
    cmd = sub;
  }
  if (i >= argv.length) return;
  const parent = ["acp", ...path].join(" ");
  for (const name of argv.slice(i + 1)) {
    if (name.startsWith("-") || name === "help") return;
    const sub = findCommand(cmd, name);
    if (sub === undefined) {
      const near = suggest(
        name,
        cmd
          .createHelp()
          .visibleCommands(cmd)
          .map((c) => c.name()),
      );
      const hint = near !== undefined ? ` (did you mean \`${[...path, near].join(" ")}\`?)` : "";
      throw new CliError(
        `unknown command \`${[...path, name].join(" ")}\`${hint}: see \`${parent} --help\``,
        EXIT.usage,
      );
    }
    path.push(name);
    cmd = sub;
  }
}
