import { Command, CommanderError } from "commander";
import { text } from "node:stream/consumers";
// the subpath, not the barrel: every `acp` loads this module, and the barrel is the store and the core
import { StateDbUnsafeError } from "@acp/store/state-db-error";
import { CliError, EXIT, type ExitCode } from "./exit-codes.js";
import type { CliContext, CliIo } from "./context.js";
import { registerCommands, topLevelOf, COMMANDS } from "./commands/index.js";
import { resolveHelpTarget } from "./help-target.js";
import { addGroupHelp } from "./help/group-help.js";
import { refuseUnknownCommands } from "./help/unknown-command.js";
import { promptHiddenOnTerminal } from "./home-access/hidden-prompt.js";

/** The process's own I/O. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    readStdin: () => text(process.stdin),
    stdinIsTTY: process.stdin.isTTY === true,
    stdoutIsTTY: process.stdout.isTTY === true,
    stdin: process.stdin,
    promptHidden: promptHiddenOnTerminal,
    env: process.env,
    cwd: process.cwd(),
    now: () => new Date(),
  };
}

/** The program's own usage error when it added the version hint to it, as written to stderr. */
const versionHinted = new WeakMap<Command, string>();

/**
 * Builds the `acp` program bound to a context (exported for tests and docs generation): every command, or only
 * the top-level ones named (`run` adds just the one it was asked for, so it loads only that command's code).
 */
export async function createProgram(
  ctx: CliContext,
  only: readonly string[] | undefined = undefined,
): Promise<Command> {
  const program = new Command("acp")
    .description(
      "ACP, the control plane between AI agents and the world: every action an agent proposes is " +
        "routed accept / ask / defer / refuse by one deterministic pipeline.",
    )
    .version("0.1.0", "-V, --version")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({
      writeOut: (s) => ctx.io.stdout.write(s),
      writeErr: (s) => ctx.io.stderr.write(s),
    })
    .exitOverride();
  await registerCommands(
    program,
    ctx,
    only === undefined ? COMMANDS : COMMANDS.filter((entry) => only.includes(entry.name)),
  );
  // `acp -v` is what many tools take for the version: the usage error names the spelling acp takes. Set after
  // the commands are registered, so only the program's own error says it (`acp pending -v` does not); the
  // message as said is kept for `--json`'s error, which `run` builds from the error, not from stderr
  program.configureOutput({
    outputError: (message, write) => {
      const said = message.startsWith("error: unknown option '-v'\n")
        ? message.replace("\n", " (the version: `acp --version` or `acp -V`)\n")
        : message;
      if (said !== message) versionHinted.set(program, said);
      write(said);
    },
  });
  // `acp vault nope`: exit 2 naming the closest command (or the group's commands) and the group's --help
  refuseUnknownCommands(program);
  // `acp vault --help` has examples and exit codes, as every command's help has
  addGroupHelp(program);
  // `acp help A B` reaches any depth (resolveHelpTarget): the help command's own line says so
  for (const cmd of allCommands(program))
    if (cmd.commands.length > 0) cmd.helpCommand("help [command...]", "display help for a command (at any depth)");
  program.addHelpText(
    "after",
    "\nStart here:\n" +
      "  acp demo                      watch ACP stop an agent hijacked by a poisoned calendar invite\n" +
      "  acp init                      make your home: keys, a starter policy, config.yml\n" +
      "  acp proxy --upstream 'npx -y @modelcontextprotocol/server-filesystem /tmp'\n" +
      "                                what your MCP client runs instead of the server (acp docs guides/proxy)\n" +
      "  acp pending, acp approve ID   answer the calls that ask, from any terminal\n" +
      "  acp COMMAND --help            options, defaults, examples and exit codes of one command\n" +
      "\nExit codes: 0 ok, 1 error, 2 usage, 3 refused/not allowed, 4 invalid input.\n" +
      "Home: $ACP_HOME (default ~/.acp). Docs: `acp docs` lists the guides and references installed with acp;\n" +
      "`acp docs reference/cli` is the command reference, `acp docs guides/proxy` the place to start.",
  );
  return program;
}

function applyExitOverride(cmd: Command): void {
  cmd.exitOverride();
  for (const sub of cmd.commands) applyExitOverride(sub);
}

/**
 * Runs the CLI with `argv` (without `node acp`) and returns the exit code. Never calls process.exit.
 * With `--json` (before any `--`), a command that stops with an error before it printed anything on stdout
 * prints `{"error": {"message", "exit_code"}}` there too, so a script reading stdout gets JSON either way.
 */
export async function run(argv: readonly string[], givenIo: CliIo = processIo()): Promise<ExitCode> {
  const end = argv.indexOf("--");
  const json = (end === -1 ? argv : argv.slice(0, end)).includes("--json");
  let printed = false;
  const io: CliIo = json
    ? {
        ...givenIo,
        stdout: {
          write: (chunk: string) => {
            printed = true;
            return givenIo.stdout.write(chunk);
          },
        },
      }
    : givenIo;
  const failed = (message: string, exitCode: ExitCode): ExitCode => {
    if (json && !printed) givenIo.stdout.write(`${JSON.stringify({ error: { message, exit_code: exitCode } })}\n`);
    return exitCode;
  };
  const ctx: CliContext = { io, exitCode: EXIT.ok };
  const head = end === -1 ? argv : argv.slice(0, end);
  // `acp pending …` needs only `pending`, `acp --version` none; `acp`, `acp --help`, `acp help …` and a
  // misspelt command need them all
  const only =
    topLevelOf(head) !== undefined
      ? [head[0] ?? ""]
      : head.length === 1 && (head[0] === "--version" || head[0] === "-V")
        ? []
        : undefined;
  let program: Command | undefined;
  try {
    // inside the try: a command's code that fails to load (a broken install) is an error said as one, not a stack
    program = await createProgram(ctx, only);
    applyExitOverride(program);
    for (const cmd of allCommands(program)) {
      cmd.configureOutput({
        writeOut: (s) => ctx.io.stdout.write(s),
        writeErr: (s) => ctx.io.stderr.write(s),
      });
    }
    // `acp help policy simulate` is `acp policy simulate --help`
    const resolved = resolveHelpTarget(program, head);
    const parsed = resolved === head ? argv : resolved;
    await program.parseAsync([...parsed], { from: "user" });
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return EXIT.ok;
      // `acp help [COMMAND]` asked for help (stdout, exit code 0); `acp` or `acp policy` alone is a usage error
      // whose help went to stderr (exit code 1 from commander)
      if (err.code === "commander.help") return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      if (err.code === "commander.executeSubCommandAsync") return EXIT.usage;
      if (err.exitCode === 0) return EXIT.ok;
      // `acp -v --json`: the JSON error says what stderr said, the version hint included
      const said = (program === undefined ? undefined : versionHinted.get(program))?.trimEnd() ?? err.message;
      return failed(said.replace(/^error: /, ""), EXIT.usage);
    }
    if (err instanceof CliError) {
      io.stderr.write(`acp: ${err.message}\n`);
      return failed(err.message, err.exitCode);
    }
    // a state.db that is a link, a pipe or another user's file: said as it is, not as a crash
    if (err instanceof StateDbUnsafeError) {
      io.stderr.write(`acp: ${err.message}\n`);
      return failed(err.message, EXIT.error);
    }
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`acp: internal error: ${message}\n`);
    return failed(`internal error: ${message}`, EXIT.error);
  }
}

function allCommands(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(allCommands)];
}
