import { describe, expect, it } from "vitest";
import { runCli } from "./run.js";

// `-v` is what many tools take for the version; acp takes -V and --version: the usage error points there.

describe("acp -v", () => {
  it("names acp --version (usage, exit 2)", async () => {
    const out = await runCli(["-v"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("unknown option '-v'");
    expect(out.stderr).toContain("(the version: `acp --version` or `acp -V`)");
  });

  it("a command's unknown -v is not taken for the version", async () => {
    const out = await runCli(["pending", "-v"]);
    expect(out.code).toBe(2);
    expect(out.stderr).not.toContain("--version");
  });
});
