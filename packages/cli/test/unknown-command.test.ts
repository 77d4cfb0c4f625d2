import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { createProgram } from "../src/main.js";
import { groupPaths } from "../src/help/group-help.js";
import { runCli, silentContext } from "./run.js";

// `acp vault nope` printed commander's `error: unknown command 'nope'`: no closest command when none was
// within commander's edit distance, no help named, other words than `acp help vault nope`. Every group (and
// the program) now says one line, in the words `acp help` uses, and exits 2.

const program = await createProgram(silentContext());
const groups = groupPaths(program);

function commandAt(path: readonly string[]): Command {
  let cmd = program;
  for (const name of path) cmd = cmd.commands.find((sub) => sub.name() === name) ?? cmd;
  return cmd;
}

/** A group's commands as its help lists them, without `help`. */
function ownCommands(path: readonly string[]): string[] {
  const cmd = commandAt(path);
  return cmd
    .createHelp()
    .visibleCommands(cmd)
    .map((c) => c.name())
    .filter((name) => name !== "help");
}

describe("an unknown command of a command group", () => {
  it("finds every group", () => {
    expect(groups.length).toBeGreaterThanOrEqual(9);
  });

  it.each(groups.map((path) => [path.join(" "), path] as const))(
    "acp %s NOPE: exit 2, its commands and its help named, as acp help says it",
    async (name, path) => {
      const out = await runCli([...path, "no-such-command"]);
      const commands = ownCommands(path)
        .map((c) => `\`${c}\``)
        .join(", ");
      const expected = `acp: unknown command \`${name} no-such-command\` (its commands: ${commands}): see \`acp ${name} --help\`\n`;
      expect(out).toEqual({ code: 2, stdout: "", stderr: expected });
      expect(await runCli(["help", ...path, "no-such-command"])).toEqual(out);
    },
  );

  it.each(groups.map((path) => [path.join(" "), path] as const))(
    "acp %s with a misspelt command: exit 2, the closest command named",
    async (name, path) => {
      const first = ownCommands(path)[0] ?? "";
      const out = await runCli([...path, `${first}x`]);
      expect(out).toEqual({
        code: 2,
        stdout: "",
        stderr: `acp: unknown command \`${name} ${first}x\` (did you mean \`${name} ${first}\`?): see \`acp ${name} --help\`\n`,
      });
    },
  );

  it("at the top: the closest command, or the help to read; with --json an error object on stdout", async () => {
    expect(await runCli(["nope"])).toEqual({
      code: 2,
      stdout: "",
      stderr: "acp: unknown command `nope`: see `acp --help`\n",
    });
    expect((await runCli(["polcy"])).stderr).toBe(
      "acp: unknown command `polcy` (did you mean `policy`?): see `acp --help`\n",
    );
    const json = await runCli(["vault", "nope", "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        message: "unknown command `vault nope` (its commands: `set`, `list`, `rm`): see `acp vault --help`",
        exit_code: 2,
      },
    });
  });
});
