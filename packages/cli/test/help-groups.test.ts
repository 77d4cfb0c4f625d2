import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { createProgram } from "../src/main.js";
import { groupExamples, groupPaths } from "../src/help/group-help.js";
import { runCli, silentContext } from "./run.js";

// A command group's --help (`acp vault --help`) says what every command's does: a usage line, what it is for,
// its commands, examples, and exit codes. Its examples are its commands' own, which help-examples.test.ts runs.

const program = await createProgram(silentContext());
const groups = groupPaths(program);

/** An example as a command: the `$ ` prompt and a trailing `# comment` dropped, spaces collapsed. */
function normalized(example: string): string {
  return example
    .replace(/^\$ /, "")
    .replace(/\s+#\s.*$/, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** The lines of a help's Examples section that are commands (not comments, not output lines). */
function examplesOf(help: string): string[] {
  const section = /^Examples?:\n((?:(?: .*)?\n)*)/m.exec(help)?.[1] ?? "";
  return section
    .split("\n")
    .filter((line) => /^ {2}\S/.test(line) && !line.trim().startsWith("#"))
    .map((line) => normalized(line.trim()));
}

function commandAt(path: readonly string[]): Command {
  let cmd = program;
  for (const name of path) cmd = cmd.commands.find((sub) => sub.name() === name) ?? cmd;
  return cmd;
}

function leaves(cmd: Command, path: string[]): string[][] {
  if (cmd.commands.length === 0) return [path];
  return cmd.commands.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

describe("every command group's --help is as complete as a command's", () => {
  it("finds the groups: policy, intent, graph, proof, audit, vault, config, claim, claim issuer", () => {
    expect(groups.map((g) => g.join(" "))).toEqual(
      expect.arrayContaining([
        "policy",
        "intent",
        "graph",
        "proof",
        "audit",
        "vault",
        "config",
        "claim",
        "claim issuer",
      ]),
    );
  });

  it.each(groups.map((path) => [path.join(" "), path] as const))(
    "acp %s --help: usage, what it is, its commands, examples and exit codes",
    async (name, path) => {
      const out = await runCli([...path, "--help"]);
      expect(out.code).toBe(0);
      const lines = out.stdout.split("\n");
      expect(lines[0]).toBe(`Usage: acp ${name} [options] [command]`);
      expect(lines[2]?.trim()).not.toBe("");
      expect(out.stdout).toMatch(/^Commands:$/m);
      expect(groupExamples(path).length).toBeGreaterThan(0);
      expect(examplesOf(out.stdout)).toEqual(groupExamples(path).map(normalized));
      expect(out.stdout).toContain(`acp ${name} COMMAND --help`);
      expect(out.stdout).toMatch(/^Exit codes: .*2 usage/m);
    },
  );

  it.each(groups.map((path) => [path.join(" "), path] as const))(
    "acp %s: every example is one of its commands' own, word for word",
    async (_name, path) => {
      const own = new Set<string>();
      for (const leaf of leaves(commandAt(path), [...path]))
        for (const example of examplesOf((await runCli([...leaf, "--help"])).stdout)) own.add(example);
      for (const example of groupExamples(path)) expect([...own], example).toContain(normalized(example));
    },
  );

  it.each(groups.map((path) => [path.join(" "), path] as const))(
    "acp %s alone, or with an unknown command, is usage (2), as its help says",
    async (_name, path) => {
      const alone = await runCli([...path]);
      expect(alone.code).toBe(2);
      expect(alone.stderr).toMatch(/^Exit codes:/m);
      expect((await runCli([...path, "no-such-command"])).code).toBe(2);
    },
  );
});
