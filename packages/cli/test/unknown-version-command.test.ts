import { describe, expect, it } from "vitest";
import { runCli } from "./run.js";

// `acp version` is what a person tries first for the version (npm, docker and git take it): the usage error
// points at the spelling acp takes, `acp --version`.

describe("asking for the version the way other tools take it", () => {
  it("acp version names acp --version (usage, exit 2)", async () => {
    const out = await runCli(["version"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe("acp: unknown command `version` (the version: `acp --version`): see `acp --help`\n");
  });

  it("acp help version says the same", async () => {
    const out = await runCli(["help", "version"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("(the version: `acp --version`)");
  });

  it("a command group's own `version` is not taken for it", async () => {
    const out = await runCli(["vault", "version"]);
    expect(out.code).toBe(2);
    expect(out.stderr).not.toContain("--version");
  });
});
