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

describe("acp -v --json", () => {
  it("the JSON error names acp --version as stderr does", async () => {
    const out = await runCli(["-v", "--json"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("(the version: `acp --version` or `acp -V`)");
    const error = (JSON.parse(out.stdout) as { error: { message: string; exit_code: number } }).error;
    expect(error).toEqual({
      message: "unknown option '-v' (the version: `acp --version` or `acp -V`)",
      exit_code: 2,
    });
  });

  it("a command's unknown -v keeps its plain JSON error", async () => {
    const out = await runCli(["pending", "-v", "--json"]);
    expect(out.code).toBe(2);
    expect(JSON.parse(out.stdout)).toEqual({ error: { message: "unknown option '-v'", exit_code: 2 } });
  });
});
