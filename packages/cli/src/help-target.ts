import type { Command } from "commander";
import { unknownCommand } from "./help/unknown-command.js";

/** The subcommand of `cmd` named `name` (or aliased so). */
function findCommand(cmd: Command, name: string): Command | undefined {
  return cmd.commands.find((sub) => sub.name() === name || sub.aliases().includes(name));
}

/**
 * Resolves `acp [COMMAND…] help NAME…` to `acp COMMAND… NAME… --help`, so `acp help policy simulate` shows
 * `policy simulate`'s help as `acp policy simulate --help` does (commander's own help command looks one level
 * down only, and showed `policy`'s). Refuses a NAME that is not a command there (exit 2, `unknown command
 * \`NAME\``, with the closest command when one is near): commander printed the whole help on stderr without
 * saying why. Returns `argv` itself when it asks for no help this way; anything else is left to commander.
 */
export function resolveHelpTarget(program: Command, argv: readonly string[]): readonly string[] {
  let cmd = program;
  const path: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (token === "help" && cmd.commands.length > 0 && findCommand(cmd, token) === undefined) break;
    const sub = findCommand(cmd, token);
    if (sub === undefined) return argv;
    path.push(token);
    cmd = sub;
  }
  if (i >= argv.length) return argv;
  let named = 0;
  for (const name of argv.slice(i + 1)) {
    // `acp help policy simulate --json`: an option after the names changes nothing about whose help it is
    if (name.startsWith("-")) break;
    if (name === "help") return argv;
    const sub = findCommand(cmd, name);
    if (sub === undefined) throw unknownCommand(cmd, name);
    path.push(name);
    cmd = sub;
    named++;
  }
  // `acp help` / `acp policy help` alone: commander prints that command's help
  if (named === 0) return argv;
  return [...path, "--help"];
}
