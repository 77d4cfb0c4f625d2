import type { Command } from "commander";
// the subpath, not the barrel: every `acp` loads this module, and the barrel is the whole core
import { suggest } from "@acp/core/suggest";
import { CliError, EXIT } from "../exit-codes.js";

/** The names of `cmd` from below the program down (`["claim", "issuer"]`); `[]` for the program. */
export function commandPath(cmd: Command): string[] {
  const path: string[] = [];
  for (let at: Command | null = cmd; at?.parent != null; at = at.parent) path.unshift(at.name());
  return path;
}

/**
 * The usage error for `name`, which is not a command of `cmd` (exit 2): the whole command as typed, the
 * closest command of `cmd` when one is near, else the commands it has, and whose `--help` to read. The same
 * words whether it came as `acp vault nope` or `acp help vault nope`.
 */
export function unknownCommand(cmd: Command, name: string): CliError {
  const path = commandPath(cmd);
  const names = cmd
    .createHelp()
    .visibleCommands(cmd)
    .map((c) => c.name());
  const near = suggest(name, names);
  const own = names.filter((n) => n !== "help");
  const hint =
    // what npm, git and docker take for their version; acp takes --version (-V)
    path.length === 0 && name === "version"
      ? " (the version: `acp --version`)"
      : near !== undefined
        ? ` (did you mean \`${[...path, near].join(" ")}\`?)`
        : path.length > 0 && own.length > 0
          ? ` (its commands: ${own.map((n) => `\`${n}\``).join(", ")})`
          : "";
  return new CliError(
    `unknown command \`${[...path, name].join(" ")}\`${hint}: see \`${["acp", ...path].join(" ")} --help\``,
    EXIT.usage,
  );
}

/**
 * Makes every command group (a command with commands of its own and no action) refuse a word that is none of
 * them with {@link unknownCommand}, instead of commander's `error: unknown command 'nope'`, which suggested
 * nothing when no command was within its edit distance and named no help to read. Uses commander's
 * `command:*` event, emitted exactly where it would call `unknownCommand()`.
 */
export function refuseUnknownCommands(program: Command): void {
  const visit = (cmd: Command): void => {
    if (cmd.commands.length > 0)
      cmd.on("command:*", (operands: readonly string[]) => {
        throw unknownCommand(cmd, operands[0] ?? "");
      });
    for (const sub of cmd.commands) visit(sub);
  };
  visit(program);
}
