import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { createProgram } from "../src/main.js";
import { runCli, silentContext } from "./run.js";

const pages = fileURLToPath(new URL("../../../docs/reference/cli/", import.meta.url));

function leaves(command: Command, path: string[] = []): [string[], Command][] {
  if (command.commands.length === 0) return [[path, command]];
  return command.commands.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

/** A command's page: docs/reference/cli/policy-simulate.md, or its group's (claim.md for every acp claim …). */
function pageOf(path: readonly string[]): string {
  const own = `${pages}${path.join("-")}.md`;
  return existsSync(own) ? own : `${pages}${path[0] ?? ""}.md`;
}

const commands = leaves(await createProgram(silentContext()));

describe("docs/reference/cli: every option of every command is on its page", () => {
  it.each(commands.map(([path, command]) => [path.join(" "), path, command] as const))(
    "acp %s",
    (_name, path, command) => {
      const page = pageOf(path);
      expect(existsSync(page), page).toBe(true);
      const text = readFileSync(page, "utf8");
      for (const option of command.options) {
        if (option.long === undefined || option.long === "--help") continue;
        // `--no-passphrase` is documented as itself; the long name, not only its short form (`-o`)
        expect(text, `${option.long} on ${page}`).toContain(option.long);
      }
    },
  );
});

describe("--help says the same thing the same way", () => {
  it.each(commands.map(([path, command]) => [path.join(" "), command] as const))(
    "acp %s: --json says what it prints (not `machine-readable output`)",
    (_name, command) => {
      const json = command.options.find((o) => o.long === "--json");
      if (json !== undefined) expect(json.description).toMatch(/\bprint/);
    },
  );
});

describe("--help shows defaults as a person types them", () => {
  it.each(commands.map(([path]) => [path.join(" "), path] as const))(
    "acp %s: no default in quotes or as an empty list",
    async (_name, path) => {
      const help = (await runCli([...path, "--help"])).stdout;
      // commander prints a string default as `(default: "4")` and a repeatable option's as `(default: [])`
      expect(help).not.toMatch(/default: "|default: \[\]/);
    },
  );
});
