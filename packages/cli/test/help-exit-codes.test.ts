import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { createProgram } from "../src/main.js";
import { runCli, silentContext } from "./run.js";

function leaves(command: Command, path: string[] = ["acp"]): string[][] {
  if (command.commands.length === 0) return [path];
  return command.commands.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

const commands = leaves(await createProgram(silentContext()));

describe("every command's --help says what its exit codes mean", () => {
  it.each(commands.map((path) => [path.join(" "), path.slice(1)] as const))(
    "%s --help has an Exit codes section",
    async (_name, argv) => {
      const out = await runCli([...argv, "--help"]);
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/^Exit codes:/m);
    },
  );

  it("covers the commands that lacked it: policy simulate, graph lint|review, audit tail, every claim command", () => {
    const names = commands.map((path) => path.join(" "));
    for (const name of [
      "acp policy simulate",
      "acp graph lint",
      "acp graph review",
      "acp audit tail",
      "acp claim serve",
      "acp claim create-faq",
      "acp claim publish",
      "acp claim link",
      "acp claim issuer keygen",
      "acp claim issuer issue",
      "acp claim takedown",
      "acp claim reputation",
    ])
      expect(names).toContain(name);
  });

  it("covers the last three that lacked it: run, intent new, audit verify (no command is exempt)", () => {
    const names = commands.map((path) => path.join(" "));
    for (const name of ["acp run", "acp intent new", "acp audit verify"]) expect(names).toContain(name);
  });

  it.each(commands.map((path) => [path.join(" "), path.slice(1)] as const))(
    "%s --help lists 2 (usage): an unknown option exits 2 in every command",
    async (_name, argv) => {
      const help = (await runCli([...argv, "--help"])).stdout;
      const section = help.slice(help.search(/^Exit codes:/m));
      expect(section).toMatch(/(^|[\s,(])2[\s,)]/m);
      expect((await runCli([...argv, "--no-such-option"])).code).toBe(2);
    },
  );

  it.each(commands.map((path) => [path.join(" "), path.slice(1)] as const))(
    "%s --help shows how it is run (an Examples section)",
    async (_name, argv) => {
      const help = (await runCli([...argv, "--help"])).stdout;
      const section = /^Examples?:\n((?: +\S.*\n?)+)/m.exec(help)?.[1] ?? "";
      expect(section).toMatch(/\bacp /);
    },
  );
});
