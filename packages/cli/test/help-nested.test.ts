import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { createProgram } from "../src/main.js";
import { runCli, silentContext } from "./run.js";

/** Every command and command group below `acp`, as its path of names. */
function paths(command: Command, path: string[] = []): string[][] {
  return command.commands.flatMap((sub) => [[...path, sub.name()], ...paths(sub, [...path, sub.name()])]);
}

const all = paths(await createProgram(silentContext())).filter((path) => path.at(-1) !== "help");

describe("acp help A B … shows the help of `acp A B …`, at every depth", () => {
  it("walks the nested commands too (policy simulate, claim issuer keygen)", () => {
    const names = all.map((path) => path.join(" "));
    for (const name of ["policy simulate", "intent set", "claim issuer keygen", "audit verify"])
      expect(names).toContain(name);
  });

  it.each(all.map((path) => [path.join(" "), path] as const))(
    "acp help %s prints what `--help` prints, on stdout, exit 0",
    async (_name, path) => {
      const viaHelp = await runCli(["help", ...path]);
      const viaFlag = await runCli([...path, "--help"]);
      expect(viaHelp).toEqual(viaFlag);
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: acp ${path.join(" ")} `));
    },
  );

  it("acp policy help simulate and acp claim issuer help keygen name the leaf too", async () => {
    expect((await runCli(["policy", "help", "simulate"])).stdout).toMatch(/^Usage: acp policy simulate /);
    expect((await runCli(["claim", "help", "issuer", "keygen"])).stdout).toMatch(/^Usage: acp claim issuer keygen /);
  });

  it("an option after the names does not change whose help it is (acp help policy simulate --json)", async () => {
    const out = await runCli(["help", "policy", "simulate", "--json"]);
    expect(out).toEqual(await runCli(["policy", "simulate", "--help"]));
  });

  it("the help command's own line says it reaches any depth, in acp and in every group", async () => {
    for (const argv of [["--help"], ["policy", "--help"], ["claim", "issuer", "--help"]])
      expect((await runCli(argv)).stdout).toMatch(
        /^ {2}help \[command\.\.\.\] +display help for a command \(at any depth\)$/m,
      );
  });

  it("a wrong name below a right one is still refused, naming the full path", async () => {
    const out = await runCli(["help", "policy", "simulat"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      "acp: unknown command `policy simulat` (did you mean `policy simulate`?): see `acp policy --help`\n",
    );
  });
});
